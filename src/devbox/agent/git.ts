import { OutputTail } from "../output-tail.js";
import { runProcess } from "../process-runner.js";
import type { SecretMask } from "./secret-mask.js";
import { GitStepError } from "./git-step-error.js";
import { AGENT_GIT_ARGS, agentGitEnv, guardRepositoryConfig } from "./repository-config.js";

export { GitStepError } from "./git-step-error.js";

/** Who checkpoint commits are by. */
export const CHECKPOINT_AUTHOR = {
  name: "ClusterCode",
  email: "clustercode@users.noreply.github.com",
} as const;

/** Where and how git runs; `output` collects the combined output of every step. */
export interface GitContext {
  cwd: string;
  env: Record<string, string>;
  signal: AbortSignal;
  output: OutputTail;
  /** Secrets masked in `output` and `tee`. */
  mask?: SecretMask;
  tee?: (text: string) => void;
  /**
   * Environment that authenticates git to the source repository, asked for before each step
   * that talks to it (ls-remote, fetch, push), so a token that expired is replaced in time.
   */
  credentials?: () => Promise<Record<string, string>>;
}

const NETWORK_STEPS = new Set(["ls-remote", "fetch", "push"]);

/** Runs git with `args` (never through a shell). */
async function git(
  context: GitContext,
  args: readonly string[],
  quiet = false,
): Promise<{ exitCode: number; stdout: string }> {
  const stdout = new OutputTail(64 * 1024);
  const auth = NETWORK_STEPS.has(args[0] ?? "") ? await context.credentials?.() : undefined;
  // Queries (rev-parse, ls-remote) keep their answers out of the output and the log.
  const output = quiet ? new OutputTail(64 * 1024) : context.output;
  const { exitCode } = await runProcess({
    file: "git",
    // The repository's hooks and fsmonitor never run with the agent (nor with its token).
    args: [...AGENT_GIT_ARGS, ...args],
    cwd: context.cwd,
    // Never wait for a password prompt: a missing credential is an error, not a hang.
    env: { ...context.env, ...(await agentGitEnv()), ...auth, GIT_TERMINAL_PROMPT: "0" },
    signal: context.signal,
    output,
    stdout,
    ...(context.mask === undefined ? {} : { mask: context.mask }),
    ...(context.tee === undefined || quiet ? {} : { tee: context.tee }),
  });
  return { exitCode, stdout: stdout.text() };
}

async function gitOrThrow(
  context: GitContext,
  args: readonly string[],
  quiet = false,
): Promise<string> {
  const { exitCode, stdout } = await git(context, args, quiet);
  if (exitCode !== 0) throw new GitStepError(args[0] ?? "", exitCode);
  return stdout;
}

/** Refuses branch names git would not accept or would read as an option. */
export async function checkBranchName(context: GitContext, branch: string): Promise<void> {
  if (branch === "" || branch.startsWith("-")) throw new GitStepError("check-ref-format", 1);
  await gitOrThrow(context, ["check-ref-format", `refs/heads/${branch}`]);
}

/** A full commit id (sha-1 or sha-256), as the engine passes the run's last checkpoint. */
const COMMIT_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/**
 * Checks out the run branch at `sha` when given (the run's last checkpoint: the only commit a
 * DevBox may start on, see {@link checkoutAt}); else the local branch when this checkout
 * already has it (a restarted agent keeps its work), else origin's branch when it exists there,
 * else a new branch from origin's `baseBranch`. Returns the checked-out commit.
 */
export async function checkoutRunBranch(
  context: GitContext,
  branch: string,
  baseBranch: string,
  sha?: string,
): Promise<string> {
  await checkBranchName(context, branch);
  await checkBranchName(context, baseBranch);
  // What ran before (a warm setup) may have written the config: it is the agent's again.
  await guardRepositoryConfig(context);
  if (sha !== undefined && (await checkoutAt(context, branch, sha))) return headOf(context);
  const local = await git(
    context,
    ["rev-parse", "--verify", "--quiet", `refs/heads/${branch}`],
    true,
  );
  if (local.exitCode === 0) {
    await gitOrThrow(context, ["checkout", "--quiet", branch]);
  } else {
    const { exitCode: remote } = await git(context, [
      "ls-remote",
      "--exit-code",
      "--heads",
      "origin",
      `refs/heads/${branch}`,
    ]);
    if (remote !== 0 && remote !== 2) throw new GitStepError("ls-remote", remote);
    const source = remote === 0 ? branch : baseBranch;
    await gitOrThrow(context, [
      "fetch",
      "--quiet",
      "origin",
      `+refs/heads/${source}:refs/remotes/origin/${source}`,
    ]);
    await gitOrThrow(context, [
      "checkout",
      "--quiet",
      "--no-track",
      "-B",
      branch,
      `refs/remotes/origin/${source}`,
    ]);
  }
  return headOf(context);
}

/**
 * Resets `branch` to `sha` and checks it out, fetching the commit by its id from origin when the
 * checkout lacks it (a clone from a mirror fetched before the last checkpoint was pushed), then
 * by the run branch. The clone's own copy of the branch is never trusted: it may be a round old.
 * False when origin does not have the commit either: the caller checks out what there is, and
 * the engine, told that head, refuses the DevBox.
 */
async function checkoutAt(context: GitContext, branch: string, sha: string): Promise<boolean> {
  if (!COMMIT_ID.test(sha)) throw new GitStepError("check-commit-id", 1);
  const has = async () =>
    (await git(context, ["cat-file", "-e", `${sha}^{commit}`], true)).exitCode === 0;
  if (!(await has())) await git(context, ["fetch", "--quiet", "origin", sha]);
  if (!(await has())) {
    await git(context, [
      "fetch",
      "--quiet",
      "origin",
      `+refs/heads/${branch}:refs/remotes/origin/${branch}`,
    ]);
  }
  if (!(await has())) return false;
  await gitOrThrow(context, ["checkout", "--quiet", "--no-track", "-B", branch, sha]);
  return true;
}

async function headOf(context: GitContext): Promise<string> {
  return (await gitOrThrow(context, ["rev-parse", "HEAD"], true)).trim();
}

/**
 * Commits every change (when there is one) with the message in `messageFile`, pushes HEAD to the
 * run branch on origin and returns the commit. Hooks are skipped: a checkpoint is a save point,
 * not a quality gate, and must not be refused by one.
 */
export async function checkpoint(
  context: GitContext,
  branch: string,
  messageFile: string,
): Promise<string> {
  // The commands just run may have written hooks, filters, an `insteadOf` or a new origin into
  // the config: none of it is read by the agent's git, which then holds the hub token.
  await guardRepositoryConfig(context);
  await gitOrThrow(context, ["add", "--all"]);
  const { exitCode: diff } = await git(context, ["diff", "--cached", "--quiet"]);
  if (diff !== 0 && diff !== 1) throw new GitStepError("diff", diff);
  if (diff === 1) {
    const identity = {
      GIT_AUTHOR_NAME: CHECKPOINT_AUTHOR.name,
      GIT_AUTHOR_EMAIL: CHECKPOINT_AUTHOR.email,
      GIT_COMMITTER_NAME: CHECKPOINT_AUTHOR.name,
      GIT_COMMITTER_EMAIL: CHECKPOINT_AUTHOR.email,
    };
    await gitOrThrow({ ...context, env: { ...context.env, ...identity } }, [
      "commit",
      "--quiet",
      "--no-verify",
      "--file",
      messageFile,
    ]);
  }
  await gitOrThrow(context, ["push", "--quiet", "origin", `HEAD:refs/heads/${branch}`]);
  return (await gitOrThrow(context, ["rev-parse", "HEAD"], true)).trim();
}

/** The absolute path of the checkout's git directory (where the agent keeps its journal). */
export async function gitDirectory(context: GitContext): Promise<string> {
  return (await gitOrThrow(context, ["rev-parse", "--absolute-git-dir"], true)).trim();
}
