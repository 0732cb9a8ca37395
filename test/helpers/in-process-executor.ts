import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { runDevBoxAgent } from "../../src/devbox/agent/agent.js";
import { readAgentSettings } from "../../src/devbox/agent/settings.js";
import { DevBoxError } from "../../src/devbox/errors.js";
import type { DevBoxExecutor, StartRequest } from "../../src/devbox/executor.js";
import { agentEnvironment, passedOn } from "../../src/devbox/local/agent-env.js";
import { cloneCheckout } from "../../src/devbox/local/clone.js";
import { SingleFlight } from "../../src/devbox/single-flight.js";
import { decodeSettings } from "../../src/settings/decode.js";

/** One agent running in this process. */
interface RunningAgent {
  stop: AbortController;
  done: Promise<unknown>;
}

/**
 * Runs each DevBox's agent (the code `clustercode devbox` runs) in this process, in a fresh
 * clone under `<stateDir>/devboxes/<devboxId>/checkout`, with the environment a local executor
 * gives it: no child process for the agent, no `dist/`. Its commands still run as processes.
 * For tests of the app and the runtime; the real local executor's processes, sandbox and
 * reaping are tried in test/devbox/local and test/security.
 */
export class InProcessExecutor implements DevBoxExecutor {
  readonly #agents = new Map<string, RunningAgent>();
  readonly #starting = new SingleFlight();
  /** Each agent's log lines, by DevBox id. */
  readonly logs = new Map<string, string[]>();

  constructor(
    private readonly stateDir: string,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  /** Clones and starts the agent; does nothing when this DevBox's agent is running. */
  start(request: StartRequest): Promise<void> {
    return this.#starting.run(request.devboxId, () => this.#start(request));
  }

  async #start(request: StartRequest): Promise<void> {
    const { devboxId } = request;
    if (this.#agents.has(devboxId)) return;
    const log: string[] = [];
    this.logs.set(devboxId, log);
    const dir = join(this.stateDir, "devboxes", devboxId);
    const checkout = join(dir, "checkout");
    await mkdir(dir, { recursive: true });
    if (!existsSync(join(checkout, ".git")))
      await cloneCheckout(request, { dir, checkout }, passedOn(this.env));
    const env = agentEnvironment(request, this.env, {
      // As the local executor: an agent running as root (CI) is told it runs in a sandbox.
      asRoot: process.getuid?.() === 0,
      warn: (line) => log.push(line),
    });
    const settings = readAgentSettings(decodeSettings(env), request.token);
    if (!settings.ok) throw new DevBoxError("invalid-request", settings.message);
    const stop = new AbortController();
    const done = runDevBoxAgent({
      apiUrl: request.apiUrl,
      devboxId,
      cwd: checkout,
      env,
      settings: settings.settings,
      signal: stop.signal,
      log: { write: (text: string) => log.push(text) },
    })
      .catch((error: unknown) => log.push(`agent failed: ${String(error)}`))
      .finally(() => {
        if (this.#agents.get(devboxId)?.stop === stop) this.#agents.delete(devboxId);
      });
    this.#agents.set(devboxId, { stop, done });
  }

  /** Stops the agent (and the command it runs) and waits for it to end. */
  async stop(devboxId: string): Promise<void> {
    await this.#starting.settled(devboxId);
    const agent = this.#agents.get(devboxId);
    if (agent === undefined) return;
    agent.stop.abort();
    await agent.done;
  }

  /** Stops every agent. */
  async stopAll(): Promise<void> {
    await Promise.all([...this.#agents.keys()].map((devboxId) => this.stop(devboxId)));
  }
}
