import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CommandRequest, CommandResult } from "../../engine/commands.js";
import { commandEnvironment, type AgentSettings } from "./settings.js";
import { ApiClient } from "./api-client.js";
import { interruptedResult, type CommandJournal } from "./command-journal.js";
import { DevBoxError } from "../errors.js";
import type { OutputTail } from "../output-tail.js";
import { AgentLog } from "./agent-log.js";
import { AGENT_EXIT, AgentStopping } from "./exit-codes.js";
import { SecretMask } from "./secret-mask.js";
import { hubGitAuthEnv } from "../hub/git/git-auth.js";
import { probeHarnesses } from "./harness.js";
import { executeCommand } from "./run-command.js";
import { setUpCheckout } from "./setup.js";
import { openGateway } from "./gateway.js";
import { HubCacheClient } from "./hub-cache-client.js";
import type { HubSetupCache } from "./hub-setup-cache.js";

export { AGENT_EXIT } from "./exit-codes.js";

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

/**
 * The DevBox agent: checks out the run branch, runs setup, reports ready, then runs the commands
 * the hub hands out one at a time, each at most once per checkout. It heartbeats throughout and
 * exits when released, when signalled, or when the API has been unreachable for the lapse,
 * killing its running command first. Resolves to the exit code ({@link AGENT_EXIT}).
 */
export async function runDevBoxAgent(options: DevBoxAgentOptions): Promise<number> {
  if (options.signal?.aborted === true) return AGENT_EXIT.terminated;
  return new DevBoxAgent(options).run();
}

/** One agent's lifetime: its contact with the API, its setup and its command loop. */
class DevBoxAgent {
  readonly #options: DevBoxAgentOptions;
  readonly #settings: AgentSettings;
  /** Aborted, with an {@link AgentStopping} reason, when the agent is to exit. */
  readonly #life = new AbortController();
  readonly #client: ApiClient;
  readonly #credentials: () => Promise<Record<string, string>>;
  /** What commands run with: the executor's environment without the agent's token. */
  readonly #env: Record<string, string>;
  // Secret values never leave the DevBox in its log or in what it reports.
  readonly #mask: SecretMask;
  readonly #log: AgentLog;
  #exitCode: number = AGENT_EXIT.stopped;
  #lastContact = Date.now();
  #beating = false;
  #running: string | undefined;
  /** Stops the running command (not the agent) when the runtime interrupts it. */
  #interruptRunning: ((commandId: string) => void) | undefined;

  constructor(options: DevBoxAgentOptions) {
    this.#options = options;
    this.#settings = options.settings;
    this.#client = new ApiClient({
      apiUrl: options.apiUrl,
      devboxId: options.devboxId,
      token: this.#settings.token,
      signal: this.#life.signal,
      requestTimeoutMs: Math.min(this.#settings.lapseMs, 10_000),
      onContact: () => (this.#lastContact = Date.now()),
    });
    // The hub adds the repository's credentials; the DevBox holds none of its own.
    const gitAuth = hubGitAuthEnv(this.#settings.token);
    this.#credentials =
      this.#settings.gitViaHub === true
        ? () => Promise.resolve(gitAuth)
        : () => Promise.resolve({});
    this.#env = commandEnvironment(options.env, this.#settings);
    this.#mask = new SecretMask(this.#settings.secrets.map((name) => options.env[name]));
    this.#log = new AgentLog(options.log, this.#mask);
  }

  /** Runs the agent to its end; resolves to the exit code. */
  async run(): Promise<number> {
    const { settings, signal } = this.#options;
    const onSignal = () => this.#stop(AGENT_EXIT.terminated, "terminated");
    signal?.addEventListener("abort", onSignal, { once: true });
    // In its own network namespace, the hub is reachable only through the relay socket.
    const gateway =
      this.#settings.hubSocket === undefined
        ? undefined
        : await openGateway(this.#settings.hubSocket, this.#options.apiUrl);
    const heartbeat = setInterval(() => this.#beat(), settings.heartbeatMs);
    const watchdog = setInterval(() => this.#watch(), Math.min(settings.heartbeatMs, 500));
    this.#beat();
    const tmpRoot = await mkdtemp(join(tmpdir(), "clustercode-devbox-"));
    try {
      const journal = await this.#setUp(tmpRoot);
      if (journal !== undefined) await this.#work(journal, tmpRoot);
    } catch (error) {
      this.#settle(error);
    } finally {
      clearInterval(heartbeat);
      clearInterval(watchdog);
      signal?.removeEventListener("abort", onSignal);
      await rm(tmpRoot, { recursive: true, force: true });
      gateway?.close();
    }
    return this.#exitCode;
  }

  /** Ends the agent's lifetime with `code`; the first call wins. */
  #stop(code: number, why: string): void {
    if (this.#life.signal.aborted) return;
    this.#exitCode = code;
    this.#log.say(why);
    this.#life.abort(new AgentStopping(why));
  }

  /** What an error that reached the top means: a rejection, a bug, or noise while stopping. */
  #settle(error: unknown): void {
    if (!this.#life.signal.aborted && isRejection(error)) {
      this.#stop(AGENT_EXIT.apiRejected, (error as Error).message);
    } else if (!this.#life.signal.aborted) {
      throw error;
    } else if (!(error instanceof AgentStopping)) {
      this.#log.say(`while stopping: ${String(error)}`);
    }
  }

  /** Sends one heartbeat unless one is in flight, and acts on the answer. */
  #beat(): void {
    if (this.#beating || this.#life.signal.aborted) return;
    this.#beating = true;
    this.#client
      .heartbeat(this.#running)
      .then(
        (answer) => {
          if ("stop" in answer) this.#stop(AGENT_EXIT.stopped, "released by the runtime");
          else if (answer.interrupt !== undefined) this.#interruptRunning?.(answer.interrupt);
        },
        (error: unknown) => {
          if (isRejection(error)) this.#stop(AGENT_EXIT.apiRejected, (error as Error).message);
          // An unreachable API is the watchdog's to judge, over the whole lapse.
          else if (!this.#life.signal.aborted) this.#log.say(`heartbeat: ${String(error)}`);
        },
      )
      .finally(() => (this.#beating = false));
  }

  /** Exits when the API has not answered for longer than the lapse: the runtime is gone. */
  #watch(): void {
    const { lapseMs } = this.#settings;
    if (Date.now() - this.#lastContact > lapseMs) {
      this.#stop(AGENT_EXIT.apiLost, `the API was unreachable for over ${lapseMs} ms; exiting`);
    }
  }

  /** `request` again after each retryable failure, until it succeeds or the agent stops. */
  async #retrying<T>(request: () => Promise<T>): Promise<T> {
    for (;;) {
      try {
        return await request();
      } catch (error) {
        if (this.#life.signal.aborted) throw this.#life.signal.reason;
        if (!(error instanceof DevBoxError && error.retryable)) throw error;
        this.#log.say(`${error.message}; retrying`);
        await sleep(Math.min(this.#settings.heartbeatMs, 1000), this.#life.signal);
      }
    }
  }

  /**
   * Branch checkout, then the setup commands, then `ready`. Resolves to the checkout's command
   * journal, or undefined when setup failed (reported, and the agent stopping).
   */
  async #setUp(tmpRoot: string): Promise<CommandJournal | undefined> {
    const hubCache = this.#hubCache(tmpRoot);
    const context = {
      ...this.#processContext(),
      credentials: this.#credentials,
      ...(hubCache === undefined ? {} : { hubCache }),
    };
    const setup = await setUpCheckout(context, this.#settings);
    if (!setup.ok) {
      await this.#failSetup(setup.output, setup.why);
      return undefined;
    }
    const { harnesses } = this.#settings;
    const harness =
      harnesses.length === 0 ? undefined : await probeHarnesses(harnesses, this.#processContext());
    await this.#retrying(() =>
      this.#client.ready({
        ok: true,
        sha: setup.sha,
        ...(harness === undefined ? {} : { harness }),
        ...(this.#settings.isolation === undefined ? {} : { isolation: this.#settings.isolation }),
      }),
    );
    return setup.journal;
  }

  /**
   * The setup cache through the hub: for a DevBox with `devbox.cache` and no cache directory
   * of its own (an ECS task has no host directory to see); the hub decides the scopes.
   */
  #hubCache(tmpRoot: string): HubSetupCache | undefined {
    const cache = this.#settings.setupCache;
    if (cache === undefined || cache.entries.length === 0 || cache.dirs.length > 0) return;
    const client = new HubCacheClient({
      apiUrl: this.#options.apiUrl,
      devboxId: this.#options.devboxId,
      token: this.#settings.token,
      signal: this.#life.signal,
      idleTimeoutMs: Math.max(this.#settings.lapseMs, 30_000),
    });
    return { client, tmpDir: tmpRoot };
  }

  /** Reports a failed setup with the tail of its output, then stops the agent. */
  async #failSetup(output: OutputTail, why: string): Promise<void> {
    if (this.#life.signal.aborted) throw this.#life.signal.reason;
    const error = this.#mask.text(`${why}\n${output.text().slice(-8000)}`);
    await this.#retrying(() => this.#client.ready({ ok: false, error }));
    this.#stop(AGENT_EXIT.setupFailed, why);
  }

  /** Long-polls for commands, runs each once and reports it, until the agent stops. */
  async #work(journal: CommandJournal, tmpRoot: string): Promise<void> {
    const wait = this.#options.pollWaitSeconds ?? 20;
    while (!this.#life.signal.aborted) {
      const answer = await this.#retrying(() => this.#client.poll(wait));
      if ("stop" in answer) {
        this.#stop(AGENT_EXIT.stopped, "released by the runtime");
        break;
      }
      for (const request of answer.commands) {
        const result = await this.#runOnce(journal, tmpRoot, request);
        if (result === undefined) break;
        await this.#retrying(() => this.#client.result(result));
      }
    }
  }

  /**
   * Runs `request` unless the journal knows it: a finished one reports its recorded result, a
   * started one is not run again. Undefined when the agent was stopped part-way.
   */
  async #runOnce(
    journal: CommandJournal,
    tmpRoot: string,
    request: CommandRequest,
  ): Promise<CommandResult | undefined> {
    const { commandId } = request;
    const known = journal.lookup(commandId);
    if (known?.state === "finished") return known.result;
    if (known?.state === "started") {
      const result = interruptedResult(commandId);
      await journal.markFinished(result);
      return result;
    }
    await journal.markStarted(commandId);
    const interrupted = this.#startRunning(commandId);
    this.#log.say(`running ${commandId} (${request.command.type})`);
    let result: CommandResult;
    try {
      result = await executeCommand(request, {
        ...this.#processContext(),
        tmpRoot,
        branch: this.#settings.branch,
        signal: AbortSignal.any([this.#life.signal, interrupted]),
        onSpawn: (pid) => journal.setRunning({ commandId, pid }),
        credentials: this.#credentials,
      });
    } finally {
      this.#running = undefined;
      this.#interruptRunning = undefined;
      journal.clearRunning();
    }
    if (interrupted.aborted) {
      result = { ...result, output: `${result.output}\nclustercode: interrupted by the runtime\n` };
    }
    // Killed part-way: the outcome is unknown and the journal keeps saying "started".
    if (this.#life.signal.aborted) return undefined;
    await journal.markFinished(result);
    return result;
  }

  /**
   * Makes `commandId` the running command, tells the hub at once, and returns the signal the
   * runtime's interrupt of it aborts.
   */
  #startRunning(commandId: string): AbortSignal {
    this.#running = commandId;
    const interrupted = new AbortController();
    this.#interruptRunning = (id) => {
      if (id !== commandId || interrupted.signal.aborted) return;
      this.#log.say(`interrupting ${commandId}, as the runtime asked`);
      interrupted.abort();
    };
    this.#beat();
    return interrupted.signal;
  }

  /** Where a process the agent starts runs, and where its output goes. */
  #processContext() {
    const { cwd } = this.#options;
    const { signal } = this.#life;
    const { sandbox } = this.#settings;
    return {
      cwd,
      env: this.#env,
      signal,
      mask: this.#mask,
      tee: this.#log.tee,
      ...(sandbox === undefined ? {} : { sandbox }),
    };
  }
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
