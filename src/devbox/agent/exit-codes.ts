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

/** Why the agent is exiting, as the abort reason of its lifetime. */
export class AgentStopping extends Error {
  override readonly name = "AgentStopping";
}
