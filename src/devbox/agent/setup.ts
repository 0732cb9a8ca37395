import { OutputTail } from "../output-tail.js";
import { runProcess } from "../process-runner.js";
import type { CommandSandbox } from "./command-sandbox.js";
import type { SecretMask } from "./secret-mask.js";
import type { AgentSettings } from "./settings.js";
import { CommandJournal } from "./command-journal.js";
import { checkoutRunBranch, gitDirectory, GitStepError, type GitContext } from "./git.js";
import { OUTPUT_LIMIT_BYTES } from "./run-command.js";
import { setUpWhileWarm } from "../warm-marker.js";
import {
  CACHE_HIT_ENV,
  restoreSetupCache,
  saveSetupCache,
  type CacheContext,
} from "./setup-cache.js";
import { restoreFromHub, saveToHub, type HubSetupCache } from "./hub-setup-cache.js";

/** How a DevBox's setup ended: ready at `sha`, or failed for `why` with the output so far. */
export type SetupOutcome =
  | { ok: true; sha: string; journal: CommandJournal }
  | { ok: false; why: string; output: OutputTail };

/** Where setup runs; its output is collected by setup itself. */
export interface SetupContext {
  cwd: string;
  /** The environment for git and the setup commands (without the agent's token). */
  env: Record<string, string>;
  signal: AbortSignal;
  /** Secrets masked in the output and the log. */
  mask: SecretMask;
  /** Where the masked output is copied to as it can be shown (the agent's log). */
  tee: (text: string) => void;
  /** Git's credentials for the source repository (see {@link GitContext}). */
  credentials: () => Promise<Record<string, string>>;
  /** Wraps each setup command (see {@link CommandSandbox}); git steps run as the agent. */
  sandbox?: CommandSandbox;
  /** The setup cache kept by the hub, used when the DevBox sees no cache directory (ECS). */
  hubCache?: HubSetupCache;
}

/**
 * Checks out the run branch, opens the checkout's command journal, restores the setup cache
 * (`devbox.cache`, see {@link restoreCache}), runs the setup commands in order, stopping at the first that fails, and
 * saves the cache entries that missed once they all succeeded. A git step that fails is an
 * outcome; anything else thrown is not caught.
 */
export async function setUpCheckout(
  context: SetupContext,
  settings: Pick<AgentSettings, "branch" | "baseBranch" | "startSha" | "setup" | "setupCache">,
): Promise<SetupOutcome> {
  const output = new OutputTail(OUTPUT_LIMIT_BYTES);
  const git: GitContext = { ...context, output };
  let sha: string;
  let journal: CommandJournal;
  let gitDir: string;
  try {
    sha = await checkoutRunBranch(git, settings.branch, settings.baseBranch, settings.startSha);
    gitDir = await gitDirectory(git);
    journal = await CommandJournal.open(gitDir);
  } catch (error) {
    if (!(error instanceof GitStepError)) throw error;
    return { ok: false, why: `checking out ${settings.branch} failed: ${error.message}`, output };
  }
  // A warm DevBox ran this very setup at this very commit before it was claimed.
  if (await setUpWhileWarm(gitDir, sha, settings.setup)) {
    context.tee(`clustercode: set up while warm at ${sha}\n`);
    return { ok: true, sha, journal };
  }
  const cache = await restoreCache(context, settings);
  const hit = cache?.hit === true;
  // Setup commands may skip an install the cache already made (actions/cache's `cache-hit`).
  const env = { ...context.env, [CACHE_HIT_ENV]: hit ? "true" : "false" };
  for (const [index, script] of settings.setup.entries()) {
    const args = ["-eo", "pipefail", "-c", script];
    const { cwd, signal, mask, tee, sandbox } = context;
    const { exitCode } = await runProcess({
      file: "bash",
      args,
      cwd,
      env,
      signal,
      mask,
      tee,
      output,
      ...(sandbox === undefined ? {} : { wrap: sandbox }),
    });
    if (exitCode !== 0) {
      return {
        ok: false,
        why: `setup command ${index + 1} (${script}) exited with ${exitCode}`,
        output,
      };
    }
  }
  // Saved before any command of the run: what is kept is what setup made, nothing later.
  if (cache !== undefined && !hit) await cache.save();
  return { ok: true, sha, journal };
}

/**
 * Restores `devbox.cache` before setup: from the cache directories the DevBox sees (local
 * DevBoxes), else through the hub (ECS DevBoxes), else not at all. Whether every entry was
 * restored, and how to save those that missed once setup passed; undefined without a cache.
 */
async function restoreCache(
  context: SetupContext,
  settings: Pick<AgentSettings, "setup" | "setupCache">,
): Promise<{ hit: boolean; save: () => Promise<void> } | undefined> {
  const cache = settings.setupCache;
  if (cache === undefined || cache.entries.length === 0) return undefined;
  const cacheContext: CacheContext = {
    ...context,
    say: (line) => context.tee(`clustercode: ${line}\n`),
  };
  const hub = cache.dirs.length === 0 ? context.hubCache : undefined;
  if (hub !== undefined) {
    const restored = await restoreFromHub(cacheContext, hub, cache, settings.setup);
    const hit = restored.hits.every(Boolean);
    return { hit, save: () => saveToHub(cacheContext, hub, cache, restored) };
  }
  const restored = await restoreSetupCache(cacheContext, cache, settings.setup);
  const hit = restored.hits.every(Boolean);
  return { hit, save: () => saveSetupCache(cacheContext, cache, restored) };
}
