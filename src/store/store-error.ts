import { AppError } from "../errors/app-error.js";

/**
 * What went wrong in the store, in the store's words. Adapters map their SDK's errors to one of
 * these once, so callers decide on `code` and `retryable` and never read message text.
 */
export type StoreErrorCode =
  /** A conditional write found a different item than expected, where the caller did not expect it. */
  | "condition_failed"
  /** The database asked us to slow down (throttling, request limits). */
  | "throttled"
  /** The database could not be reached or failed on its side (network, 5xx, timeout). */
  | "unavailable"
  /** Items of a batch were still unprocessed after the bounded retries. */
  | "unprocessed"
  /** The table (or another resource) does not exist. */
  | "not_found"
  /** The existing table does not have the keys and indexes this store needs. */
  | "schema_mismatch"
  /** The database rejected the request as malformed (e.g. an item over 400 KB). */
  | "invalid_request"
  /** The caller passed a value the store cannot write (negative seq, non-JSON snapshot, ...). */
  | "invalid_argument"
  /** Credentials are missing or not allowed to do this. */
  | "access_denied"
  /** A stored record is not what this app wrote (a hand-edited or foreign table); nothing was applied. */
  | "corrupt_record"
  /** Anything not classified above. */
  | "unknown";

/** The one error type the store throws. `cause` keeps the original error for logs. */
export class StoreError extends AppError<StoreErrorCode> {
  override readonly name = "StoreError";
}
