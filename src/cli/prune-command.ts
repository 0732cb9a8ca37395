import { execFile } from "node:child_process";
import { readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { isFinal, type RunSnapshot } from "../engine/model.js";
import { RunRepository } from "../store/run-repository.js";
import { parseOptions, UsageError, type Command } from "./command.js";
import { repositoryOf } from "./repository-of.js";
import { usableStateDir } from "./run-output.js";
import { sinceOf } from "./scorecard-command.js";
import { withStore } from "./status-command.js";

const git = promisify(execFile);

/**
 * `clustercode prune [--older-than AGE] [--dry-run] [--repo DIR]`: deletes the run branches
 * (`clustercode/local-RUN` and its variants' branches) and the DevBox checkouts of the
 * repository's ended runs, those ended before AGE ago when given. The runs' records and evidence
 * stay (`status`, `log` and `scorecard` still read them); a branch checked out is kept.
 */
const prune: Command = async (args, io) => {
  const { values, positionals } = parseOptions(args, {
    "older-than": { type: "string" },
    "dry-run": { type: "boolean", short: "n" },
    repo: { type: "string" },
    "state-dir": { type: "string" },
  });
  if (positionals.length > 0)
    throw new UsageError("prune takes no arguments", { pointToHelp: true });
  const now = Date.now();
  const before =
    values["older-than"] === undefined ? now : sinceOf(values["older-than"], now, "--older-than");
  const repo = await repositoryOf(io.cwd, values.repo);
  const stateDir = await usableStateDir(values["state-dir"], io.settings.store);
  const ended = await withStore(stateDir, io, async (store) =>
    (await new RunRepository(store).list(repo, { limit: Infinity }))
      .map((run) => run.document.state)
      .filter((state) => isFinal(state.status) && state.updatedAt <= before),
  );
  const dry = values["dry-run"] === true;
  const branches = await branchesOf(repo, ended);
  const checkouts = await checkoutsOf(stateDir, ended);
  for (const branch of branches) {
    if (dry) io.stdout.write(`would delete branch ${branch}\n`);
    else await deleteBranch(repo, branch, io.stderr);
  }
  for (const dir of checkouts) {
    if (dry) io.stdout.write(`would remove ${dir}\n`);
    else await rm(dir, { recursive: true, force: true });
  }
  io.stdout.write(
    `${dry ? "would prune" : "pruned"} ${ended.length} ended run${ended.length === 1 ? "" : "s"}: ${branches.length} branches, ${checkouts.length} DevBox checkouts\n`,
  );
  return 0;
};
export default prune;

/** The branches of the runs in `repo`: each run's branch and those named after it. */
async function branchesOf(repo: string, runs: RunSnapshot[]): Promise<string[]> {
  const { stdout } = await git("git", [
    "-C",
    repo,
    "for-each-ref",
    "--format=%(refname:short)",
    "refs/heads/clustercode/",
  ]);
  const names = stdout.split("\n").filter((name) => name !== "");
  return names.filter((name) =>
    runs.some(
      (run) =>
        name === `clustercode/local-${run.runId}` ||
        name.startsWith(`clustercode/local-${run.runId}-`),
    ),
  );
}

/** The DevBox directories of the runs under the state directory. */
async function checkoutsOf(stateDir: string, runs: RunSnapshot[]): Promise<string[]> {
  const root = join(stateDir, "devboxes");
  const names = await readdir(root).catch(() => [] as string[]);
  return names
    .filter((name) => runs.some((run) => name.startsWith(`${run.runId}-`)))
    .map((name) => join(root, name));
}

async function deleteBranch(
  repo: string,
  branch: string,
  stderr: { write(text: string): unknown },
): Promise<void> {
  try {
    await git("git", ["-C", repo, "branch", "-D", branch]);
  } catch (error) {
    const why = (error as { stderr?: string }).stderr?.trim().split("\n")[0] ?? String(error);
    stderr.write(`clustercode prune: kept ${branch}: ${why}\n`);
  }
}
