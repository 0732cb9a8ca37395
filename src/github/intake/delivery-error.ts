import { AppError } from "../../errors/app-error.js";

/**
 * A webhook delivery the store did not take: GitHub gets a 5xx with this error's generic text
 * (never the store's own, which is logged with the delivery) and may redeliver it.
 */
export class DeliveryNotRecordedError extends AppError<"not_recorded"> {
  override readonly name = "DeliveryNotRecordedError";

  constructor(cause: unknown) {
    super("not_recorded", "the delivery could not be recorded; it was not accepted", {
      retryable: true,
      cause,
    });
  }
}
