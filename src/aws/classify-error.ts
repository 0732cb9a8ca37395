/** How an AWS SDK error is classified for an adapter's typed error. */
export interface AwsErrorClass<C extends string> {
  code: C | "unavailable" | "unknown";
  retryable: boolean;
  message: string;
}

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
 * Classifies whatever an AWS SDK client threw during `operation`, by the error's `name` (looked
 * up in the adapter's `byName` table), its Node `code`, or the SDK's `$fault`; never by message
 * text. Each adapter (store, ECS) wraps the result in its own error type, once.
 */
export function classifyAwsError<C extends string>(
  error: unknown,
  service: string,
  operation: string,
  byName: Readonly<Record<string, { code: C; retryable: boolean }>>,
): AwsErrorClass<C> {
  const name = error instanceof Error ? error.name : "";
  const detail = error instanceof Error ? error.message : String(error);
  const known = Object.hasOwn(byName, name) ? byName[name] : undefined;
  if (known !== undefined) {
    return { ...known, message: `${service} ${operation} failed: ${name}: ${detail}` };
  }
  const nodeCode = readProperty(error, "code");
  if (typeof nodeCode === "string" && NETWORK_CODES.has(nodeCode)) {
    return {
      code: "unavailable",
      retryable: true,
      message: `${service} ${operation} could not reach the endpoint`,
    };
  }
  if (readProperty(error, "$fault") === "server") {
    return {
      code: "unavailable",
      retryable: true,
      message: `${service} ${operation} failed on the server: ${detail}`,
    };
  }
  return {
    code: "unknown",
    retryable: false,
    message: `${service} ${operation} failed: ${name || "error"}: ${detail}`,
  };
}

function readProperty(value: unknown, key: string): unknown {
  return typeof value === "object" && value !== null
    ? (value as Record<string, unknown>)[key]
    : undefined;
}
