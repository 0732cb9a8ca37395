import { StoreError, type StoreErrorCode } from "./store-error.js";

/** DynamoDB exception names (the SDK's `error.name`) and what they mean to the store. */
const BY_NAME: Record<string, { code: StoreErrorCode; retryable: boolean }> = {
  ConditionalCheckFailedException: { code: "condition_failed", retryable: false },
  ProvisionedThroughputExceededException: { code: "throttled", retryable: true },
  ThrottlingException: { code: "throttled", retryable: true },
  RequestLimitExceeded: { code: "throttled", retryable: true },
  LimitExceededException: { code: "throttled", retryable: true },
  InternalServerError: { code: "unavailable", retryable: true },
  ServiceUnavailable: { code: "unavailable", retryable: true },
  TimeoutError: { code: "unavailable", retryable: true },
  ResourceNotFoundException: { code: "not_found", retryable: false },
  ValidationException: { code: "invalid_request", retryable: false },
  SerializationException: { code: "invalid_request", retryable: false },
  ItemCollectionSizeLimitExceededException: { code: "invalid_request", retryable: false },
  AccessDeniedException: { code: "access_denied", retryable: false },
  UnrecognizedClientException: { code: "access_denied", retryable: false },
  InvalidSignatureException: { code: "access_denied", retryable: false },
  MissingAuthenticationTokenException: { code: "access_denied", retryable: false },
  CredentialsProviderError: { code: "access_denied", retryable: false },
  ExpiredTokenException: { code: "access_denied", retryable: false },
};

/** Node socket error codes that mean the endpoint could not be reached or dropped us. */
const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/**
 * Maps whatever the DynamoDB client threw during `operation` to a StoreError. Classifies by the
 * error's `name`, its Node `code`, or the SDK's `$fault`, never by message text.
 */
export function toStoreError(error: unknown, operation: string): StoreError {
  if (error instanceof StoreError) return error;
  const name = error instanceof Error ? error.name : "";
  const detail = error instanceof Error ? error.message : String(error);
  const known = BY_NAME[name];
  if (known !== undefined) {
    return new StoreError(known.code, `DynamoDB ${operation} failed: ${name}: ${detail}`, {
      retryable: known.retryable,
      cause: error,
    });
  }
  const nodeCode = readProperty(error, "code");
  if (typeof nodeCode === "string" && NETWORK_CODES.has(nodeCode)) {
    return new StoreError("unavailable", `DynamoDB ${operation} could not reach the endpoint`, {
      retryable: true,
      cause: error,
    });
  }
  if (readProperty(error, "$fault") === "server") {
    return new StoreError("unavailable", `DynamoDB ${operation} failed on the server: ${detail}`, {
      retryable: true,
      cause: error,
    });
  }
  return new StoreError("unknown", `DynamoDB ${operation} failed: ${name || "error"}: ${detail}`, {
    cause: error,
  });
}

/** True when `error` is (or maps to) a failed condition of a conditional write. */
export function isConditionFailed(error: unknown): boolean {
  return error instanceof StoreError && error.code === "condition_failed";
}

function readProperty(value: unknown, key: string): unknown {
  return typeof value === "object" && value !== null
    ? (value as Record<string, unknown>)[key]
    : undefined;
}
