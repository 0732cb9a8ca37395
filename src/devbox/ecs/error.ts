import { classifyAwsError } from "../../aws/classify-error.js";
import { AppError } from "../../errors/app-error.js";

/** What went wrong talking to ECS, in the executor's words. */
export type EcsErrorCode =
  /** ECS asked us to slow down (throttling, request limits). */
  | "throttled"
  /** ECS could not be reached or failed on its side (network, 5xx, timeout). */
  | "unavailable"
  /** The cluster, task or task definition does not exist. */
  | "not_found"
  /** ECS rejected the request as malformed, or the setup cannot work (bad image, roles...). */
  | "invalid_request"
  /** Credentials are missing or not allowed to do this. */
  | "access_denied"
  /** No container instance could take the task after every retry (`failures[]` of RunTask). */
  | "placement_failed"
  /** The executor's configuration (environment) is incomplete or malformed. */
  | "invalid_config"
  /** Anything not classified above. */
  | "unknown";

/** The one error type of the ECS executor. `cause` keeps the SDK's error for logs. */
export class EcsError extends AppError<EcsErrorCode> {
  override readonly name = "EcsError";
}

/** ECS exception names (the SDK's `error.name`) and what they mean to the executor. */
const BY_NAME: Record<string, { code: EcsErrorCode; retryable: boolean }> = {
  ThrottlingException: { code: "throttled", retryable: true },
  LimitExceededException: { code: "throttled", retryable: true },
  ServerException: { code: "unavailable", retryable: true },
  ServiceUnavailableException: { code: "unavailable", retryable: true },
  TimeoutError: { code: "unavailable", retryable: true },
  ClusterNotFoundException: { code: "not_found", retryable: false },
  TaskNotFoundException: { code: "not_found", retryable: false },
  InvalidParameterException: { code: "invalid_request", retryable: false },
  ClientException: { code: "invalid_request", retryable: false },
  PlatformUnknownException: { code: "invalid_request", retryable: false },
  PlatformTaskDefinitionIncompatibilityException: { code: "invalid_request", retryable: false },
  UnsupportedFeatureException: { code: "invalid_request", retryable: false },
  BlockedException: { code: "access_denied", retryable: false },
  AccessDeniedException: { code: "access_denied", retryable: false },
  UnrecognizedClientException: { code: "access_denied", retryable: false },
  InvalidSignatureException: { code: "access_denied", retryable: false },
  ExpiredTokenException: { code: "access_denied", retryable: false },
  CredentialsProviderError: { code: "access_denied", retryable: false },
};

/**
 * Maps whatever the ECS client threw during `operation` to a EcsError, by the error's `name`,
 * its Node `code` or the SDK's `$fault`; never by message text.
 */
export function toEcsError(error: unknown, operation: string): EcsError {
  if (error instanceof EcsError) return error;
  const { code, retryable, message } = classifyAwsError(error, "ECS", operation, BY_NAME);
  return new EcsError(code, message, { retryable, cause: error });
}
