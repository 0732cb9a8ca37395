import { randomUUID } from "node:crypto";
import { lstat, mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { OutputTail } from "../output-tail.js";
import { runProcess } from "../process-runner.js";
import { GitStepError } from "./git-step-error.js";

/**
 * Arguments every git the agent runs for itself starts with: it runs no hook and no fsmonitor
 * of the repository's (a command can write `.git/hooks/pre-push`).
 */
export const AGENT_GIT_ARGS = [
  "-c",
  "core.hooksPath=/dev/null",
  "-c",
  "core.fsmonitor=false",
] as const;

/**
 * The environment every git the agent runs for itself gets on top of its own: a global config of
 * the agent's, written afresh for each (HOME's is the commands' to write), that only trusts the
 * repositories of the DevBox not its own: the host's mirror and a local source. Git does not pass
 * `-c` settings on to a local fetch's upload-pack, so this cannot be an argument.
 */
export async function agentGitEnv(): Promise<Record<string, string>> {
  gitConfigDir ??= mkdtemp(join(tmpdir(), "clustercode-agent-"));
  const dir = await gitConfigDir;
  const file = join(dir, "gitconfig");
  // Each step writes its own copy and renames it into place: a link planted where the file is
  // is replaced, not written through, and steps running at once never see a half-written file.
  const fresh = join(dir, `gitconfig-${randomUUID()}`);
  await writeFile(fresh, "[safe]\n\tdirectory = *\n", { flag: "wx", mode: 0o600 });
  await rename(fresh, file);
  return { GIT_CONFIG_GLOBAL: file };
}

/** The agent's own directory for its git config (mode 0700, made once per process). */
let gitConfigDir: Promise<string> | undefined;

/**
 * The keys of a checkout's `.git/config` the agent's git may read. Anything else (an include, a
 * filter, `core.sshCommand`, `url.*.insteadOf`, `http.proxy`, a credential helper, a pushurl,
 * `remote.*.receivepack`) is the repository's code, or sends the hub token elsewhere.
 */
const ALLOWED = [
  /^core\.(repositoryformatversion|filemode|bare|logallrefupdates|ignorecase|precomposeunicode|symlinks)$/,
  /^remote\.(origin|mirror)\.(url|fetch|promisor|partialclonefilter)$/,
  /^branch\.[^\n]+\.(remote|merge)$/,
  /^extensions\.(objectformat|partialclone)$/,
  /^user\.(name|email)$/,
];

/** Per checkout: the origin the agent found at its first step, before any command ran. */
const pinnedOrigins = new Map<string, string>();

/** Where and how the guard runs git on the config file. */
export interface ConfigGuardContext {
  cwd: string;
  env: Record<string, string>;
  signal: AbortSignal;
}

/**
 * Makes the checkout's git config the agent's again before its own git steps: `.git` must be a
 * directory (not a link, no `commondir` elsewhere), and its config keeps only the keys the
 * agent's git needs, with origin as it was at the agent's first step. Commands may change the
 * config as they like between steps; the agent's git never reads what they wrote.
 */
export async function guardRepositoryConfig(context: ConfigGuardContext): Promise<void> {
  const gitDir = join(context.cwd, ".git");
  const dirInfo = await lstat(gitDir).catch(() => undefined);
  const file = join(gitDir, "config");
  const fileInfo = await lstat(file).catch(() => undefined);
  if (dirInfo?.isDirectory() !== true || fileInfo?.isFile() !== true) {
    throw new GitStepError("config", 128);
  }
  await rm(join(gitDir, "commondir"), { force: true, recursive: true });
  const entries = await readConfig(context, file);
  const origin = entries.find(([key]) => key === "remote.origin.url")?.[1];
  if (origin !== undefined && !pinnedOrigins.has(context.cwd)) {
    pinnedOrigins.set(context.cwd, origin);
  }
  const pinned = pinnedOrigins.get(context.cwd);
  const kept = entries
    .filter(([key]) => ALLOWED.some((pattern) => pattern.test(key)))
    .filter(([key]) => key !== "remote.origin.url");
  if (pinned !== undefined) kept.push(["remote.origin.url", pinned]);
  const same =
    kept.length === entries.length &&
    kept.every(([key, value]) => entries.some(([k, v]) => k === key && v === value));
  if (same) return;
  const temporary = join(gitDir, "config.agent");
  await rm(temporary, { force: true, recursive: true });
  for (const [key, value] of kept)
    await configGit(context, ["--file", temporary, "--add", key, value]);
  await rename(temporary, file);
}

/** The entries of the config file `file` (includes not followed), as [key, value]. */
async function readConfig(context: ConfigGuardContext, file: string): Promise<[string, string][]> {
  const text = await configGit(context, ["--file", file, "--no-includes", "--null", "--list"]);
  return text
    .split("\0")
    .filter((entry) => entry !== "")
    .map((entry) => {
      const at = entry.indexOf("\n");
      return at < 0 ? [entry, ""] : [entry.slice(0, at), entry.slice(at + 1)];
    });
}

async function configGit(context: ConfigGuardContext, args: string[]): Promise<string> {
  const stdout = new OutputTail(256 * 1024);
  const { exitCode } = await runProcess({
    file: "git",
    args: [...AGENT_GIT_ARGS, "config", ...args],
    // Not in the checkout: `git config --file` needs no repository, and reads none then.
    cwd: "/",
    env: { ...context.env, ...(await agentGitEnv()) },
    signal: context.signal,
    output: new OutputTail(4096),
    stdout,
  });
  if (exitCode !== 0) throw new GitStepError("config", exitCode);
  return stdout.text();
}
