import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CommandRequest, CommandResult } from "../../engine/commands.js";
import type { AgentSettings } from "./settings.js";
import { ApiClient } from "./api-client.js";
import { CommandJournal } from "./command-journal.js";
import { DevBoxError } from "../errors.js";
import {
  checkoutRunBranch,
  gitDirectory,
  GitStepError,
  tokenCredentials,
  type GitContext,
} from "./git.js";
import { OutputTail } from "../output-tail.js";
import { lineMasker, secretMask } from "./secret-mask.js";
import { runProcess } from "../process-runner.js";
import { AGENT_ENV } from "../protocol.js";
import { executeCommand, OUTPUT_LIMIT_BYTES } from "./run-command.js";

/** The agent's exit codes. */
export const AGENT_EXIT = {
  /** Released by the runtime (`{ stop: true }`). */
  stopped: 0,
  /** Branch checkout or a setup command failed (reported as `ready` with `ok: false`). */
  setupFailed: 1,
  /** The API was unreachable for longer than the lapse: the runtime is presumed gone. */
  apiLost: 3,
  /** The API refused the agent (a wrong token, a malformed exchange). */
  apiRejected: 4,
  /** Stopped by a signal (SIGTERM/SIGINT). */
  terminated: 143,
} as const;

/** What the agent needs to run. */
export interface DevBoxAgentOptions {
  apiUrl: string;
  devboxId: string;
  /** The checkout (a fresh clone). */
  cwd: string;
  /** The environment the executor built; commands get it without the token. */
  env: NodeJS.ProcessEnv;
  settings: AgentSettings;
  /** Aborted when the process is asked to terminate. */
  signal?: AbortSignal;
  /** Where the agent's messages and the commands' output go. */
  log: { write(text: string): unknown };
  /** How long each long-poll may be held; default 20 seconds. */
  pollWaitSeconds?: number;
}

/** Why the agent is exiting, as the abort reason of its lifetime. */
class AgentStopping extends Error {
  override readonly name = "AgentStopping";
}

/**
 * The DevBox agent: checks out the run branch, runs setup, reports ready, then runs the commands
 * the hub hands out one at a time, each at most once per checkout. It heartbeats throughout and
 * exits when released, when signalled, or when the API has been unreachable for the lapse,
 * killing its running command first. Resolves to the exit code ({@link AGENT_EXIT}).
 */
export async function runDevBoxAgent(options: DevBoxAgentOptions): Promise<number> {
  const { settings, log } = options;
  if (options.signal?.aborted === true) return AGENT_EXIT.terminated;
  const life = new AbortController();
  let exitCode: number = AGENT_EXIT.stopped;
  const stop = (code: number, why: string) => {
    if (life.signal.aborted) return;
    exitCode = code;
    log.write(`clustercode devbox: ${why}\n`);
    life.abort(new AgentStopping(why));
  };
  const onSignal = () => stop(AGENT_EXIT.terminated, "terminated");
  options.signal?.addEventListener("abort", onSignal, { once: true });

  let lastContact = Date.now();
  let running: string | undefined;
  // Stops the running command (not the agent) when the runtime interrupts it.
  let interruptRunning: ((commandId: string) => void) | undefined;
  let beating = false;
  const client = new ApiClient({
    apiUrl: options.apiUrl,
    devboxId: options.devboxId,
    token: settings.token,
    signal: life.signal,
    requestTimeoutMs: Math.min(settings.lapseMs, 10_000),
    onContact: () => (lastContact = Date.now()),
  });
  const credentials =
    options.env[AGENT_ENV.gitTokenFromApi] === "1"
      ? repositoryCredentials(() => client.repoToken())
      : () => Promise.resolve({});
  const beat = () => {
    if (beating || life.signal.aborted) return;
    beating = true;
    client
      .heartbeat(running)
      .then(
        (answer) => {
          if ("stop" in answer) stop(AGENT_EXIT.stopped, "released by the runtime");
          else if (answer.interrupt !== undefined) interruptRunning?.(answer.interrupt);
        },
        (error: unknown) => {
          if (isRejection(error)) stop(AGENT_EXIT.apiRejected, (error as Error).message);
          // An unreachable API is the watchdog's to judge, over the whole lapse.
          else if (!life.signal.aborted)
            log.write(`clustercode devbox: heartbeat: ${String(error)}\n`);
        },
      )
      .finally(() => (beating = false));
  };
  const heartbeat = setInterval(beat, settings.heartbeatMs);
  const watchdog = setInterval(
    () => {
      if (Date.now() - lastContact > settings.lapseMs) {
        stop(
          AGENT_EXIT.apiLost,
          `the API was unreachable for over ${settings.lapseMs} ms; exiting`,
        );
      }
    },
    Math.min(settings.heartbeatMs, 500),
  );
  beat();

  const tmpRoot = await mkdtemp(join(tmpdir(), "clustercode-devbox-"));
  const env = commandEnvironment(options.env, settings);
  // Secret values never leave the DevBox in its log or in what it reports.
  const mask = secretMask(settings.secrets.map((name) => options.env[name]));
  const logLines = lineMasker(mask);
  const tee = (chunk: Buffer) => log.write(logLines.write(chunk.toString("utf8")));
  const endOfOutput = () => log.write(logLines.flush());
  const retrying = async <T>(request: () => Promise<T>): Promise<T> => {
    for (;;) {
      try {
        return await request();
      } catch (error) {
        if (life.signal.aborted) throw life.signal.reason;
        if (!(error instanceof DevBoxError && error.retryable)) throw error;
        log.write(`clustercode devbox: ${error.message}; retrying\n`);
        await sleep(Math.min(settings.heartbeatMs, 1000), life.signal);
      }
    }
  };

  try {
    // Setup: branch checkout, then the setup commands, then `ready`.
    const setupOutput = new OutputTail(OUTPUT_LIMIT_BYTES);
    const git: GitContext = {
      cwd: options.cwd,
      env,
      signal: life.signal,
      output: setupOutput,
      tee,
      credentials,
    };
    const failSetup = async (why: string) => {
      if (life.signal.aborted) throw life.signal.reason;
      endOfOutput();
      const output = mask(setupOutput.text(), { cut: setupOutput.truncated });
      const error = `${mask(why)}\n${output.slice(-8000)}`;
      await retrying(() => client.ready({ ok: false, error }));
      stop(AGENT_EXIT.setupFailed, why);
    };
    let sha: string;
    let journal: CommandJournal;
    try {
      sha = await checkoutRunBranch(git, settings.branch, settings.baseBranch);
      journal = await CommandJournal.open(await gitDirectory(git));
    } catch (error) {
      if (!(error instanceof GitStepError)) throw error;
      await failSetup(`checking out ${settings.branch} failed: ${error.message}`);
      return exitCode;
    }
    endOfOutput();
    for (const [index, script] of settings.setup.entries()) {
      const args = ["-eo", "pipefail", "-c", script];
      const bash = { file: "bash", args, cwd: options.cwd, env, signal: life.signal, tee };
      const { exitCode: code } = await runProcess({ ...bash, output: setupOutput });
      endOfOutput();
      if (code !== 0) {
        await failSetup(`setup command ${index + 1} (${script}) exited with ${code}`);
        return exitCode;
      }
    }
    await retrying(() => client.ready({ ok: true, sha }));

    // Work: long-poll, run each command once, report it.
    const runOnce = async (request: CommandRequest): Promise<CommandResult | undefined> => {
      const { commandId } = request;
      const known = journal.lookup(commandId);
      if (known?.state === "finished") return known.result;
      if (known?.state === "started") {
        const result = interruptedResult(commandId);
        await journal.markFinished(result);
        return result;
      }
      await journal.markStarted(commandId);
      running = commandId;
      const interrupted = new AbortController();
      interruptRunning = (id) => {
        if (id !== commandId || interrupted.signal.aborted) return;
        log.write(`clustercode devbox: interrupting ${commandId}, as the runtime asked\n`);
        interrupted.abort();
      };
      beat();
      log.write(`clustercode devbox: running ${commandId} (${request.command.type})\n`);
      let result: CommandResult;
      try {
        result = await executeCommand(request, {
          cwd: options.cwd,
          env,
          tmpRoot,
          branch: settings.branch,
          signal: AbortSignal.any([life.signal, interrupted.signal]),
          onSpawn: (pid) => journal.setRunning({ commandId, pid }),
          tee,
          credentials,
          mask,
        });
      } finally {
        endOfOutput();
        running = undefined;
        interruptRunning = undefined;
        journal.clearRunning();
      }
      if (interrupted.signal.aborted) {
        result = {
          ...result,
          output: `${result.output}\nclustercode: interrupted by the runtime\n`,
        };
      }
      // Killed part-way: the outcome is unknown and the journal keeps saying "started".
      if (life.signal.aborted) return undefined;
      await journal.markFinished(result);
      return result;
    };
    const wait = options.pollWaitSeconds ?? 20;
    while (!life.signal.aborted) {
      const answer = await retrying(() => client.poll(wait));
      if ("stop" in answer) {
        stop(AGENT_EXIT.stopped, "released by the runtime");
        break;
      }
      for (const request of answer.commands) {
        const result = await runOnce(request);
        if (result === undefined) break;
        await retrying(() => client.result(result));
      }
    }
  } catch (error) {
    if (!life.signal.aborted && isRejection(error)) {
      stop(AGENT_EXIT.apiRejected, (error as Error).message);
    } else if (!life.signal.aborted) {
      throw error;
    } else if (!(error instanceof AgentStopping)) {
      log.write(`clustercode devbox: while stopping: ${String(error)}\n`);
    }
  } finally {
    clearInterval(heartbeat);
    clearInterval(watchdog);
    options.signal?.removeEventListener("abort", onSignal);
    await rm(tmpRoot, { recursive: true, force: true });
  }
  return exitCode;
}

/** What a redelivered command that an earlier agent started but never finished reports. */
export function interruptedResult(commandId: string): CommandResult {
  return {
    commandId,
    exitCode: 125,
    output:
      `clustercode: command ${commandId} was already started in this checkout by an agent that ` +
      `stopped before it finished; its outcome is unknown, so it was not run again\n`,
    durationMs: 0,
    interrupted: true,
  };
}

/** The agent's environment minus its token (commands, agents included, never see it). */
function commandEnvironment(env: NodeJS.ProcessEnv, settings: AgentSettings) {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && name !== AGENT_ENV.token) result[name] = value;
  }
  result[AGENT_ENV.runId] = settings.runId;
  return result;
}

function isRejection(error: unknown): boolean {
  return error instanceof DevBoxError && error.code === "api-rejected";
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

/**
 * Git credentials from the runtime's repository token, fetched when first needed and again
 * within five minutes of its expiry; none when the runtime hands out no token (a local
 * repository). The token never lands in the checkout's configuration.
 */
function repositoryCredentials(
  fetchToken: () => Promise<{ token: string; expiresAt: string } | undefined>,
): () => Promise<Record<string, string>> {
  let cached: { env: Record<string, string>; refreshAt: number } | undefined;
  return async () => {
    if (cached !== undefined && Date.now() < cached.refreshAt) return cached.env;
    // Unreachable now: git goes on with what it had, and fails visibly if that is not enough.
    const token = await fetchToken().catch(() => null);
    if (token === null) return cached?.env ?? {};
    const env = token === undefined ? {} : tokenCredentials(token.token);
    const expires = token === undefined ? Infinity : Date.parse(token.expiresAt);
    cached = { env, refreshAt: Number.isNaN(expires) ? 0 : expires - 5 * 60_000 };
    return env;
  };
}
