/**
 * The hub's push scan reads everything a push puts in the repository, not only added lines: the
 * names of the files and directories it changes, each commit's author, committer, message and
 * headers (a `gpgsig`, a `mergetag`), and every commit a ref moves to, even one the repository
 * already holds on another branch.
 */
import { execFile, execFileSync } from "node:child_process";
import { promisify } from "node:util";
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DevBoxHub } from "../../src/devbox/hub/hub.js";
import { hubGitAuthEnv } from "../../src/devbox/hub/git/git-auth.js";
import type { PushRefusal } from "../../src/devbox/hub/git/git-service.js";
import { isolatedGitEnv } from "../helpers/git-env.js";

const RUN_BRANCH = "clustercode/7-run1";
const SECRET = "s3cr3t-value-of-the-run";
const PUSH = ["push", "origin", `HEAD:refs/heads/${RUN_BRANCH}`];

let root: string;
let hub: DevBoxHub | undefined;
let refusals: PushRefusal[];

const gitEnv = (env: Record<string, string> = {}) => isolatedGitEnv(root, env);

/** Git that does not talk to the hub (which runs in this process) may block. */
function git(cwd: string, args: string[], env: Record<string, string> = {}, input?: string) {
  return execFileSync("git", args, { cwd, env: gitEnv(env), encoding: "utf8", input }).trim();
}

/** Runs git against the hub: whether it succeeded, and what it said. */
async function tryGit(cwd: string, args: string[], env: Record<string, string>) {
  try {
    const { stdout, stderr } = await promisify(execFile)("git", args, { cwd, env: gitEnv(env) });
    return { ok: true, output: `${stdout}${stderr}` };
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string };
    return { ok: false, output: `${failed.stdout ?? ""}${failed.stderr ?? ""}` };
  }
}

function commitFile(checkout: string, path: string, text: string, env = {}): void {
  mkdirSync(join(checkout, path, ".."), { recursive: true });
  writeFileSync(join(checkout, path), text);
  git(checkout, ["add", "--all"], env);
  // The message never names the path: the name alone must be what the scan reads.
  git(checkout, ["commit", "--quiet", "-m", "a change"], env);
}

const upstreamRef = (ref: string) =>
  git(root, [
    "--git-dir",
    join(root, "upstream.git"),
    "for-each-ref",
    "--format=%(objectname)",
    ref,
  ]);

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "hub-scan-"));
  refusals = [];
  // The stand-in for GitHub: main, and two branches someone else pushed: one adds a workflow,
  // one carries the run's secret value.
  const seed = join(root, "seed");
  mkdirSync(seed);
  git(seed, ["init", "--quiet", "--initial-branch=main"]);
  commitFile(seed, "README.md", "hello\n");
  git(seed, ["checkout", "--quiet", "-b", "other-workflow"]);
  commitFile(seed, ".github/workflows/exfil.yml", "on: push\n");
  git(seed, ["checkout", "--quiet", "-b", "other-leak", "main"]);
  commitFile(seed, "notes.txt", `token=${SECRET}\n`);
  git(seed, ["checkout", "--quiet", "main"]);
  git(root, ["clone", "--quiet", "--bare", seed, join(root, "upstream.git")]);
});

afterEach(async () => {
  await hub?.close();
  hub = undefined;
  rmSync(root, { recursive: true, force: true });
});

async function setup() {
  hub = new DevBoxHub({
    onEvent: (event) => {
      if (event.type === "push.refused") refusals.push(event);
    },
    git: {
      stateDir: join(root, "state"),
      upstreamOf: () => Promise.resolve({ url: join(root, "upstream.git"), env: {} }),
      policyOf: () =>
        Promise.resolve({ runBranch: RUN_BRANCH, baseBranch: "main", allowWorkflowChanges: false }),
    },
  });
  await hub.listen();
  const { token } = hub.register({ devboxId: "run1-box1", runId: "run1", secretValues: [SECRET] });
  const auth = hubGitAuthEnv(token);
  const checkout = join(root, "checkout");
  const url = hub.gitUrl("run1-box1", "octo/repo");
  expect((await tryGit(root, ["clone", "--quiet", url, checkout], auth)).ok).toBe(true);
  git(checkout, ["checkout", "--quiet", "-b", RUN_BRANCH]);
  return { auth, checkout };
}

/** Writes a commit object whose raw headers are `headers`, on top of HEAD, and checks it out. */
function rawCommit(checkout: string, headers: string[]): void {
  const tree = git(checkout, ["rev-parse", "HEAD^{tree}"]);
  const parent = git(checkout, ["rev-parse", "HEAD"]);
  const body = [`tree ${tree}`, `parent ${parent}`, ...headers, "", "an honest message", ""];
  const sha = git(checkout, ["hash-object", "-t", "commit", "-w", "--stdin"], {}, body.join("\n"));
  git(checkout, ["reset", "--quiet", "--hard", sha]);
}

const PERSON = "1700000000 +0000";

describe("the hub's push scan", () => {
  it("refuses a secret value in a file name, a directory name, an author, a committer or a header", async () => {
    const { auth, checkout } = await setup();
    const attempts: [string, () => void][] = [
      ["file name", () => commitFile(checkout, `${SECRET}.txt`, "x\n")],
      ["directory name", () => commitFile(checkout, `dir-${SECRET}/a.txt`, "x\n")],
      ["author name", () => commitFile(checkout, "b.txt", "x\n", { GIT_AUTHOR_NAME: SECRET })],
      [
        "committer e-mail",
        () => commitFile(checkout, "c.txt", "x\n", { GIT_COMMITTER_EMAIL: `${SECRET}@x.example` }),
      ],
      [
        "gpgsig header",
        () =>
          rawCommit(checkout, [
            `author t <t@example.com> ${PERSON}`,
            `committer t <t@example.com> ${PERSON}`,
            `gpgsig -----BEGIN PGP SIGNATURE-----`,
            ` ${SECRET}`,
            ` -----END PGP SIGNATURE-----`,
          ]),
      ],
      [
        "mergetag header",
        () =>
          rawCommit(checkout, [
            `author t <t@example.com> ${PERSON}`,
            `committer t <t@example.com> ${PERSON}`,
            `mergetag object ${"0".repeat(40)}`,
            ` tagger ${SECRET} <t@example.com> ${PERSON}`,
          ]),
      ],
    ];
    for (const [vector, plant] of attempts) {
      plant();
      const pushed = await tryGit(checkout, PUSH, auth);
      expect({ vector, ok: pushed.ok }).toEqual({ vector, ok: false });
      expect(pushed.output).toContain("the value of one of the run's secrets");
      git(checkout, ["reset", "--quiet", "--hard", "origin/main"]);
    }
    expect(upstreamRef(`refs/heads/${RUN_BRANCH}`)).toBe("");
    expect(refusals).toHaveLength(attempts.length);
    expect(JSON.stringify(refusals)).not.toContain(SECRET);

    // Honest work passes: ordinary names, people, and a signed-looking commit.
    commitFile(checkout, "src/feature/index.ts", "export const x = 1;\n");
    rawCommit(checkout, [
      `author Ada <ada@example.com> ${PERSON}`,
      `committer Ada <ada@example.com> ${PERSON}`,
      `gpgsig -----BEGIN PGP SIGNATURE-----`,
      ` iQEzBAABCAAdFiEE`,
      ` -----END PGP SIGNATURE-----`,
    ]);
    expect((await tryGit(checkout, PUSH, auth)).ok).toBe(true);
    expect(upstreamRef(`refs/heads/${RUN_BRANCH}`)).toBe(git(checkout, ["rev-parse", "HEAD"]));
  });

  it("checks every commit a ref moves to, even one the repository already holds", async () => {
    const { auth, checkout } = await setup();
    commitFile(checkout, "work.txt", "work\n");
    expect((await tryGit(checkout, PUSH, auth)).ok).toBe(true);
    const accepted = upstreamRef(`refs/heads/${RUN_BRANCH}`);

    // A new variant branch made of another branch's commit that adds a workflow.
    const variant = `refs/heads/${RUN_BRANCH}-v2`;
    const workflow = await tryGit(
      checkout,
      ["push", "origin", `origin/other-workflow:${variant}`],
      auth,
    );
    expect(workflow.ok).toBe(false);
    expect(workflow.output).toContain("allow_workflow_changes");
    // The run branch moved onto an existing commit that carries the secret.
    const leak = await tryGit(
      checkout,
      ["push", "-f", "origin", `origin/other-leak:refs/heads/${RUN_BRANCH}`],
      auth,
    );
    expect(leak.ok).toBe(false);
    expect(leak.output).toContain("the value of one of the run's secrets");
    expect(upstreamRef(variant)).toBe("");
    expect(upstreamRef(`refs/heads/${RUN_BRANCH}`)).toBe(accepted);

    // Honest moves pass: a variant at the run branch's tip, then back to main.
    expect((await tryGit(checkout, ["push", "origin", `HEAD:${variant}`], auth)).ok).toBe(true);
    expect(upstreamRef(variant)).toBe(accepted);
    expect(
      (await tryGit(checkout, ["push", "-f", "origin", `origin/main:${variant}`], auth)).ok,
    ).toBe(true);
    expect(upstreamRef(variant)).toBe(git(checkout, ["rev-parse", "origin/main"]));
    expect(refusals.map((refusal) => refusal.ref)).toEqual([variant, `refs/heads/${RUN_BRANCH}`]);
  });
});
