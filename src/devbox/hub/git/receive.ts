import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { gitText, runGit } from "./git-process.js";
import { FLUSH, pktLine, ZERO_ID, type ReceiveRequest, type RefUpdate } from "./pkt-line.js";
import { contentRefusal, refRefusal, workflowRefusal, type GitPolicy } from "./push-policy.js";
import { pushedMaterial } from "./push-scan.js";

/** Where accepted ref updates go: a URL or path, and the environment that authenticates git. */
export interface GitUpstream {
  url: string;
  env: Record<string, string>;
}

/** What a push asked and what became of each ref update. */
export interface RefOutcome {
  ref: string;
  /** Why the hub refused the update (a policy), or undefined. */
  refused?: string;
  /** Why the upstream did not take an accepted update, or undefined. */
  failed?: string;
}

/** The run a push belongs to, as the hub knows it. */
export interface PushContext {
  policy: GitPolicy;
  secretValues: readonly string[];
  upstream: GitUpstream;
}

/**
 * Receives a push into a quarantine beside the staging repository `dir`, checks each ref update
 * against the run's policy, pushes the accepted ones upstream and answers report-status lines.
 */
export async function receivePush(
  dir: string,
  request: ReceiveRequest,
  context: PushContext,
): Promise<{ outcomes: RefOutcome[]; report: Buffer }> {
  const quarantine = await mkdtemp(join(dir, "incoming-"));
  try {
    const objects = join(quarantine, "objects");
    await mkdir(join(objects, "pack"), { recursive: true });
    const env = {
      GIT_DIR: dir,
      GIT_OBJECT_DIRECTORY: objects,
      GIT_ALTERNATE_OBJECT_DIRECTORIES: join(dir, "objects"),
    };
    if (request.updates.some((update) => !ZERO_ID.test(update.new)) && request.pack.length > 0) {
      const unpacked = await runGit(["index-pack", "--stdin", "--fix-thin"], {
        cwd: dir,
        env,
        input: request.pack,
      });
      if (unpacked.exitCode !== 0) {
        const outcomes = request.updates.map(({ ref }) => ({ ref, failed: "unpacker error" }));
        return { outcomes, report: report("index-pack failed", outcomes) };
      }
    }
    const outcomes: RefOutcome[] = [];
    for (const update of request.updates) {
      const refused = await refusalOf(update, context, dir, env).catch(
        () => "the pushed objects could not be read",
      );
      if (refused !== undefined) {
        outcomes.push({ ref: update.ref, refused });
        continue;
      }
      const failed = await pushUpstream(update, context.upstream, dir, env);
      outcomes.push(failed === undefined ? { ref: update.ref } : { ref: update.ref, failed });
    }
    return { outcomes, report: report(undefined, outcomes) };
  } finally {
    await rm(quarantine, { recursive: true, force: true });
  }
}

/**
 * Why the hub refuses `update`, or undefined: its ref, then what moving the ref puts in the
 * repository (its workflow files, its names, commits and content: see `pushedMaterial`).
 */
async function refusalOf(
  update: RefUpdate,
  context: PushContext,
  dir: string,
  env: Record<string, string>,
): Promise<string | undefined> {
  const byRef = refRefusal(update.ref, context.policy.runBranch);
  if (byRef !== undefined || ZERO_ID.test(update.new)) return byRef;
  // A branch names a commit; a tag object on a branch would publish a tagger and message unread.
  const type = await gitText(["cat-file", "-t", update.new], { cwd: dir, env });
  if (type.trim() !== "commit") return "a branch may only point at a commit";
  const pushed = await pushedMaterial(update.ref, update.new, context.policy.baseBranch, {
    dir,
    env,
  });
  return (
    workflowRefusal(pushed.paths, context.policy) ??
    contentRefusal(pushed.text, context.secretValues)
  );
}

/**
 * Pushes `update` to the upstream with a lease on the old value the client saw, as receive-pack
 * would apply it; returns why the upstream refused, or undefined.
 */
async function pushUpstream(
  update: RefUpdate,
  upstream: GitUpstream,
  dir: string,
  env: Record<string, string>,
): Promise<string | undefined> {
  const expected = ZERO_ID.test(update.old) ? "" : update.old;
  const source = ZERO_ID.test(update.new) ? "" : `+${update.new}`;
  const pushed = await runGit(
    [
      "push",
      "--porcelain",
      "--no-verify",
      `--force-with-lease=${update.ref}:${expected}`,
      "--",
      upstream.url,
      `${source}:${update.ref}`,
    ],
    { cwd: dir, env: { ...upstream.env, ...env } },
  );
  if (pushed.exitCode === 0) return undefined;
  const rejected = /^!\t[^\t]*\t(.*)$/m.exec(pushed.stdout.toString("utf8"))?.[1];
  return `the repository refused the update${rejected === undefined ? "" : ` ${rejected}`}`;
}

/** The report-status answer: `unpack ok`, then `ok <ref>` or `ng <ref> <reason>` per update. */
function report(unpackError: string | undefined, outcomes: readonly RefOutcome[]): Buffer {
  const lines = [pktLine(`unpack ${unpackError ?? "ok"}\n`)];
  for (const outcome of outcomes) {
    const why = outcome.refused ?? outcome.failed;
    const reason = why === undefined ? "" : ` ${why.replace(/[\r\n]+/g, " ")}`;
    lines.push(pktLine(`${why === undefined ? "ok" : "ng"} ${outcome.ref}${reason}\n`));
  }
  return Buffer.concat([...lines, FLUSH]);
}
