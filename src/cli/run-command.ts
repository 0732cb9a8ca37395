import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { relative, resolve } from "node:path";
import { promisify } from "node:util";
import { cleanIssueText } from "../agents/clean-text.js";
import { resolveEngines } from "../agents/engines.js";
import type { RunSnapshot } from "../engine/model.js";
import { LocalHost } from "../runtime/local-host.js";
import { graphVersion } from "../workflow/graph-version.js";
import { parseWorkflow } from "../workflow/parse.js";
import {
  formatOption,
  parseOptions,
  readInput,
  UsageError,
  type Command,
  type CommandIo,
} from "./command.js";
import { discoverWorkflows, findGitRoot } from "./find-workflows.js";
import { Interruption, INTERRUPTED_EXIT } from "./interruption.js";
import { LiveOutput } from "./live-output.js";
import { finish, RUN_FORMATS, usableStateDir } from "./run-output.js";
import { commitWorkingTree, uncommittedPaths } from "./uncommitted.js";
import { renderReports } from "./validate-command.js";

const git = promisify(execFile);

/**
/**
 * `clustercode run [FILE] [--repo DIR] [--brief TEXT|--brief-file F] [--state-dir D]
 * [--format json] [--include-uncommitted]`: runs a workflow (by default the repository's
 * `.clustercode/workflow.yml`) locally, with DevBoxes as child processes working in fresh clones
 * of the repository (by default the one the current directory is in); the run branch is pushed
 * back to it. Uncommitted changes are left out with a warning, or copied in with
 * `--include-uncommitted`. Ctrl-C stops the DevBoxes and leaves the run to `clustercode resume`.
 */
const run: Command = async (args, io) => {
  const { values, positionals } = parseOptions(args, {
    repo: { type: "string" },
    brief: { type: "string" },
    "brief-file": { type: "string" },
    "state-dir": { type: "string" },
    format: { type: "string" },
    as: { type: "string" },
    "include-uncommitted": { type: "boolean" },
    quiet: { type: "boolean", short: "q" },
  });
  const format = formatOption(values.format, RUN_FORMATS);
  if (positionals.length > 1) throw new UsageError("give one workflow file", { pointToHelp: true });
  const file = positionals[0] ?? (await defaultWorkflow(io));
  if (values.brief !== undefined && values["brief-file"] !== undefined) {
    throw new UsageError("give --brief or --brief-file, not both");
  }
  const text = await readInput(io, file);
  const parsed = parseWorkflow(text);
  if (!parsed.ok) {
    io.stderr.write(renderReports([{ file, valid: false, findings: parsed.findings }], "human"));
    return 2;
  }
  const repo = resolve(io.cwd, values.repo ?? (await findGitRoot(io.cwd)) ?? ".");
  const baseBranch = await currentBranch(repo);
  const brief =
    values["brief-file"] !== undefined
      ? await readInput(io, values["brief-file"])
      : (values.brief ?? "");
  // The brief may be an issue pasted from GitHub: it gets the same cleaning as the app's.
  const cleaned = cleanIssueText(brief);
  const runId = `r${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
  const branch = `clustercode/local-${runId}`;
  const stateDir = await usableStateDir(values["state-dir"], io.env);
  const live = new LiveOutput({ io, stateDir, format, quiet: values.quiet === true });
  const host = await LocalHost.open({
    command: "run",
    stateDir,
    env: io.env,
    onTransition: live.onTransition,
  });
  const interruption = new Interruption(io.stderr);
  let ended: RunSnapshot | "interrupted";
  try {
    if (format === "human") io.stdout.write(`run ${runId} of ${parsed.workflow.name} on ${repo}\n`);
    await takeUncommitted(io, repo, branch, values["include-uncommitted"] === true);
    // A run its workflow's admission queues ends this command queued; `resume` starts it later.
    const started = host.start(
      {
        runId,
        workflow: parsed.workflow,
        // The graph version is the file's git blob SHA, as the app pins it from GitHub.
        source: { path: relative(repo, resolve(io.cwd, file)), sha: graphVersion(text) },
        baseBranch,
        branch,
        brief: cleaned.text,
        briefCleaned: { ...cleaned.removed },
        startedBy: values.as ?? io.env.USER ?? "local",
        engines: resolveEngines(parsed.workflow),
      },
      { repo },
    );
    const settled = started.then((state) =>
      state.status === "queued" ? state : host.settled(runId),
    );
    ended = await Promise.race([settled, interruption.happened]);
  } finally {
    // On Ctrl-C this is what stops the DevBoxes (their process groups) before the exit.
    await host.close();
    await live.stop();
    interruption.dispose();
  }
  if (ended === "interrupted") {
    io.stderr.write(
      `run ${runId}: interrupted; its DevBoxes are stopped. Continue it with: clustercode resume ${runId}\n`,
    );
    return INTERRUPTED_EXIT;
  }
  return finish(io, ended, format);
};
export default run;

/** The workflow `run` takes when none is named: the repository's only one. */
async function defaultWorkflow(io: CommandIo): Promise<string> {
  const found = await discoverWorkflows(io.cwd);
  if (found.length === 1 && found[0] !== undefined) return found[0];
  if (found.length === 0) {
    throw new UsageError(
      "no workflow found: pass a file, or run inside a repository with .clustercode/workflow.yml (clustercode init writes one)",
    );
  }
  throw new UsageError(
    `this repository has ${found.length} workflows: name one (${found.join(", ")})`,
  );
}

/**
 * Warns that uncommitted changes stay out of the run, or (when asked) commits the working tree
 * to the run branch, where the DevBox's clone starts from.
 */
async function takeUncommitted(
  io: CommandIo,
  repo: string,
  branch: string,
  include: boolean,
): Promise<void> {
  const paths = await uncommittedPaths(repo);
  if (paths.length === 0) return;
  const files = `${paths.length} file${paths.length === 1 ? "" : "s"}`;
  if (!include) {
    io.stderr.write(
      `clustercode run: warning: ${repo} has uncommitted changes (${files}: ${paths.slice(0, 3).join(", ")}${paths.length > 3 ? ", ..." : ""}); ` +
        `the run starts from the last commit. Commit them, or pass --include-uncommitted to copy them in.\n`,
    );
    return;
  }
  const commit = await commitWorkingTree(repo, branch, "Uncommitted changes the run started from");
  io.stderr.write(
    `clustercode run: including uncommitted changes (${files}) as commit ${commit.slice(0, 12)} on ${branch}\n`,
  );
}

async function currentBranch(repo: string): Promise<string> {
  const commits = await git("git", ["-C", repo, "rev-parse", "--verify", "--quiet", "HEAD"]).then(
    () => true,
    () => false,
  );
  const inside = await git("git", ["-C", repo, "rev-parse", "--git-dir"]).then(
    () => true,
    () => false,
  );
  if (inside && !commits) {
    throw new UsageError(
      `${repo} has no commits yet: a run starts from a commit (git add -A && git commit -m "first commit")`,
    );
  }
  try {
    const { stdout } = await git("git", ["-C", repo, "rev-parse", "--abbrev-ref", "HEAD"]);
    const branch = stdout.trim();
    if (branch === "HEAD" || branch === "") throw new Error("detached HEAD");
    return branch;
  } catch (error) {
    throw new UsageError(
      `${repo} is not a git repository with a checked-out branch (${(error as Error).message.split("\n")[0]})`,
    );
  }
}
