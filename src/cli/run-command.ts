import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { relative, resolve } from "node:path";
import { promisify } from "node:util";
import { resolveEngines } from "../agents/engines.js";
import type { RunSnapshot } from "../engine/model.js";
import { LocalHost } from "../runtime/local-host.js";
import { graphVersion } from "../workflow/graph-version.js";
import { formatOption, parseOptions, UsageError, type Command, type CommandIo } from "./command.js";
import { findGitRoot } from "../workflow/find-workflows.js";
import { interruptedExit, Interruption } from "./interruption.js";
import { dryRun } from "./dry-run.js";
import { LiveOutput } from "./live-output.js";
import { chooseRun } from "./run-choice.js";
import { finish, RUN_FORMATS, usableStateDir } from "./run-output.js";
import { commitWorkingTree, uncommittedPaths } from "./uncommitted.js";

const git = promisify(execFile);

const OPTIONS = {
  repo: { type: "string" },
  brief: { type: "string" },
  "brief-file": { type: "string" },
  event: { type: "string", short: "e" },
  from: { type: "string" },
  only: { type: "string" },
  "dry-run": { type: "boolean", short: "n" },
  "state-dir": { type: "string" },
  format: { type: "string" },
  as: { type: "string" },
  "include-uncommitted": { type: "boolean" },
  quiet: { type: "boolean", short: "q" },
} as const;

/**
 * `clustercode run [FILE|NAME] [options]`: runs a workflow (by default the repository's
 * `.clustercode/workflow.yml`) locally, with DevBoxes as child processes working in fresh clones
 * of the repository (by default the one the current directory is in); the run branch is pushed
 * back to it. Uncommitted changes are left out with a warning, or copied in with
 * `--include-uncommitted`. Ctrl-C stops the DevBoxes and leaves the run to `clustercode resume`.
 */
const run: Command = async (args, io) => {
  const { values, positionals } = parseOptions(args, OPTIONS);
  const format = formatOption(values.format, RUN_FORMATS);
  if (positionals.length > 1) throw new UsageError("give one workflow", { pointToHelp: true });
  const chosen = await chooseRun(io, positionals[0], values);
  if (values["dry-run"] === true) {
    io.stdout.write(dryRun(chosen.workflow));
    return 0;
  }
  const repo = resolve(io.cwd, values.repo ?? (await findGitRoot(io.cwd)) ?? ".");
  const baseBranch = await currentBranch(repo);
  const runId = `r${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
  const branch = `clustercode/local-${runId}`;
  const { file, workflow, brief } = chosen;
  const stateDir = await usableStateDir(values["state-dir"], io.settings.store);
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
    if (format === "human") io.stdout.write(`run ${runId} of ${workflow.name} on ${repo}\n`);
    await takeUncommitted(io, repo, branch, values["include-uncommitted"] === true);
    // A run its workflow's admission queues ends this command queued; `resume` starts it later.
    const started = host.start(
      {
        runId,
        workflow,
        // The graph version is the file's git blob SHA, as the app pins it from GitHub.
        source: { path: relative(repo, resolve(io.cwd, file.file)), sha: graphVersion(file.text) },
        baseBranch,
        branch,
        brief: brief.text,
        briefCleaned: { ...brief.removed },
        startedBy: values.as ?? io.env.USER ?? "local",
        engines: resolveEngines(workflow),
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
  if (ended === "interrupted") return interruptedExit(io.stderr, runId);
  return finish(io, ended, format);
};
export default run;

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
