import type { CommandResult } from "../../engine/commands.js";
import type { ReadyBody } from "../protocol.js";

/** Why the hub gave up on a DevBox. */
export type DevBoxLostReason =
  /** It stopped heartbeating and polling for longer than the lapse. */
  | "heartbeat-lapsed"
  /** It never contacted the hub within the start timeout after it was registered. */
  | "never-connected";

/**
 * What the hub tells the runtime. Each is reported once per DevBox (ready, lost) or once per
 * command id (finished); nothing is reported about a DevBox after it is released or lost.
 */
export type DevBoxEvent =
  /** Clone, branch checkout and setup ended (the `POST ready` body, see {@link ReadyBody}). */
  | ({ type: "devbox.ready"; devboxId: string } & ReadyBody)
  /** A dispatched command ended (or was found interrupted, see `CommandResult.interrupted`). */
  | { type: "command.finished"; devboxId: string; result: CommandResult }
  /**
   * The DevBox is gone. `runningCommandId` is the command whose outcome is now unknown: the one
   * it last said it was running, else the first one it received without reporting a result.
   */
  | { type: "devbox.lost"; devboxId: string; runningCommandId?: string; reason: DevBoxLostReason }
  /** The hub refused a ref update the DevBox pushed (never with a secret value in `reason`). */
  | { type: "push.refused"; devboxId: string; ref: string; reason: string };
