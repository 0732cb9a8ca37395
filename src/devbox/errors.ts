import { AppError } from "../errors/app-error.js";

/** What went wrong at the DevBox edge, as a stable code callers can branch on. */
export type DevBoxErrorCode =
  /** The DevBox id was never registered with the hub. */
  | "unknown-devbox"
  /** The DevBox was released (or lost); it takes no more commands. */
  | "devbox-released"
  /** A command or registration is malformed (e.g. a file name that is not an identifier). */
  | "invalid-request"
  /** `git clone` of the source repository failed. */
  | "clone-failed"
  /** The DevBox process could not be started. */
  | "spawn-failed"
  /** Local DevBoxes cannot be isolated here (no bubblewrap, no user namespaces). */
  | "sandbox-unavailable"
  /** The internal API answered with an error the agent cannot recover from. */
  | "api-rejected"
  /** The internal API could not be reached. */
  | "api-unreachable"
  /** The internal API does not offer what was asked (e.g. no repository tokens here). */
  | "api-not-offered"
  /** The hub is not listening (not started, or closed). */
  | "hub-closed"
  /** The repository did not take the hub's move of a run branch onto a race winner's head. */
  | "move-failed"
  /** The setup cache's storage (the host's directory, the S3 bucket) failed. */
  | "cache-unavailable"
  /** A path in a DevBox's directory is a link (or under one) where the host expects a file. */
  | "unsafe-path";

/**
 * The one error type of `src/devbox/`: a `code` to branch on, whether retrying may help, and the
 * underlying cause. Messages are for people; never classify by them.
 */
export class DevBoxError extends AppError<DevBoxErrorCode> {
  override readonly name = "DevBoxError";
}
