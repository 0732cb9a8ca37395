import { classifyAwsError } from "../aws/classify-error.js";
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

/**
 * Maps whatever the DynamoDB client threw during `operation` to a StoreError, by the error's `name`,
 * its Node `code` or the SDK's `$fault`; never by message text.
 */
export function toStoreError(error: unknown, operation: string): StoreError {
  if (error instanceof StoreError) return error;
  const { code, retryable, message } = classifyAwsError(error, "DynamoDB", operation, BY_NAME);
  return new StoreError(code, message, { retryable, cause: error });
}

/** True when `error` is (or maps to) a failed condition of a conditional write. */
export function isConditionFailed(error: unknown): boolean {
  return error instanceof StoreError && error.code === "condition_failed";
}
