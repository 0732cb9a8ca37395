import { AppError } from "../errors/app-error.js";

/** What went wrong while the runtime applied an event, as a stable code. */
export type RuntimeErrorCode =
  /**
   * Every conditional write of the transition lost to another writer of the run. The event was
   * not applied; offering it again later may apply it (or see it refused on the newer state).
   */
  "write-conflict";

/** The one error type the runtime throws; failures inside the engine are data, not errors. */
export class RuntimeError extends AppError<RuntimeErrorCode> {
  override readonly name = "RuntimeError";
}
