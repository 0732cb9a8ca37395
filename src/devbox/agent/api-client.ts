import type { z } from "zod";
import type { CommandResult } from "../../engine/commands.js";
import { DevBoxError } from "../errors.js";
import {
  describeIssues,
  devboxRoute,
  heartbeatResponseSchema,
  pollResponseSchema,
  type HeartbeatResponse,
  type PollResponse,
  type ReadyBody,
} from "../protocol.js";

/** How the agent reaches the hub. */
export interface ApiClientOptions {
  apiUrl: string;
  devboxId: string;
  token: string;
  /** Aborts every request in flight (the agent is exiting). */
  signal: AbortSignal;
  /** Longest a request other than a long-poll may take. */
  requestTimeoutMs: number;
  /** Called whenever the hub answered at all: the API is reachable. */
  onContact: () => void;
}

/**
 * The agent's side of the internal API. Failures are {@link DevBoxError}s: `api-unreachable`
 * (retryable: no connection, a timeout, a 5xx) or `api-rejected` (a 4xx: retrying will not help).
 */
export class ApiClient {
  readonly #options: ApiClientOptions;

  constructor(options: ApiClientOptions) {
    this.#options = options;
  }

  /** Reports the end of setup. */
  async ready(body: ReadyBody): Promise<void> {
    await this.#request("POST", "ready", body, this.#options.requestTimeoutMs);
  }

  /** Long-polls for commands for up to `waitSeconds`. */
  async poll(waitSeconds: number): Promise<PollResponse> {
    const timeout = waitSeconds * 1000 + this.#options.requestTimeoutMs;
    const query = `?wait=${waitSeconds}`;
    const value = await this.#request("GET", "commands", undefined, timeout, query);
    return parse(pollResponseSchema, value);
  }

  /** Reports how a command ended. */
  async result(result: CommandResult): Promise<void> {
    await this.#request("POST", "results", result, this.#options.requestTimeoutMs);
  }

  /** Says the agent is alive and what it runs; the answer may tell it to stop. */
  async heartbeat(running: string | undefined): Promise<HeartbeatResponse> {
    const body = running === undefined ? {} : { running };
    const value = await this.#request("POST", "heartbeat", body, this.#options.requestTimeoutMs);
    return parse(heartbeatResponseSchema, value);
  }

  async #request(
    method: "GET" | "POST",
    route: "ready" | "commands" | "results" | "heartbeat",
    body: unknown,
    timeoutMs: number,
    query = "",
  ): Promise<unknown> {
    const url = `${this.#options.apiUrl}${devboxRoute(this.#options.devboxId, route)}${query}`;
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers: {
          authorization: `Bearer ${this.#options.token}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.any([this.#options.signal, AbortSignal.timeout(timeoutMs)]),
      });
    } catch (error) {
      throw new DevBoxError("api-unreachable", `${method} ${route}: ${describe(error)}`, {
        retryable: true,
        cause: error,
      });
    }
    this.#options.onContact();
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      throw new DevBoxError("api-unreachable", `${method} ${route}: ${describe(error)}`, {
        retryable: true,
        cause: error,
      });
    }
    if (!response.ok) {
      const retryable = response.status >= 500;
      const code = retryable
        ? "api-unreachable"
        : response.status === 404
          ? "api-not-offered"
          : "api-rejected";
      throw new DevBoxError(
        code,
        `${method} ${route} answered ${response.status}: ${text.slice(0, 500)}`,
        { retryable },
      );
    }
    try {
      return JSON.parse(text) as unknown;
    } catch (error) {
      throw new DevBoxError("api-rejected", `${method} ${route} answered with bad JSON`, {
        cause: error,
      });
    }
  }
}

function parse<T extends z.ZodType>(schema: T, value: unknown): z.output<T> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new DevBoxError("api-rejected", `unexpected answer: ${describeIssues(parsed.error)}`);
  }
  return parsed.data;
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : "";
  return `${error.message}${cause}`;
}
