import type { DevBoxSpec } from "../engine/commands.js";

/** Everything an executor needs to start one DevBox. */
export interface StartRequest {
  /** Unique across runs; also the executor's idempotency key. */
  devboxId: string;
  runId: string;
  /** Base URL of the hub's internal API. */
  apiUrl: string;
  /** The bearer token the hub issued for this DevBox. */
  token: string;
  spec: DevBoxSpec;
  /** Path or URL of the repository to clone. */
  repository: string;
  /**
   * The repository as the runtime names it (`owner/name`, or a local path): what warm DevBoxes
   * are kept for (see `spec.warm`).
   */
  repo?: string;
  /** Extra environment for the DevBox (e.g. resolved secrets); cannot override the agent's own. */
  env?: Record<string, string>;
  /**
   * Placeholder provider keys and the hub's proxy URLs, in place of the real keys (which stay
   * out of `env` and the task definition). Not secret: every executor passes them on, last.
   */
  providerEnv?: Record<string, string>;
  /** The DevBox's `HTTPS_PROXY`: the hub's egress proxy with its egress key (see the hub). */
  egressProxy?: string;
}

/**
 * Starts and stops DevBoxes: an ECS task in production, a local child process by default. Both
 * calls are idempotent: starting a running DevBox and stopping a gone one do nothing.
 */
export interface DevBoxExecutor {
  /** Starts the DevBox agent in a fresh clone; resolves once it is launched (not yet ready). */
  start(request: StartRequest): Promise<void>;
  /** Stops the DevBox and everything it runs; safe when it is already gone. */
  stop(devboxId: string): Promise<void>;
}
