/**
 * The internal API between the hub (in the runtime) and the DevBox agent (in the DevBox). Every
 * route lives under `/internal/devboxes/:devboxId/` and needs `Authorization: Bearer <token>`,
 * the token the hub issued for that DevBox. Bodies are JSON, at most {@link MAX_BODY_BYTES}.
 *
 * | route | body | answer |
 * |---|---|---|
 * | `POST ready` | {@link ReadyBody} | `{ ok: true }` |
 * | `GET commands?wait=S` | — | {@link PollResponse}, after at most `min(S, 30)` seconds |
 * | `POST results` | `CommandResult` | `{ ok: true }` (duplicates too) |
 * | `POST heartbeat` | {@link HeartbeatBody} | {@link HeartbeatResponse} (may ask to interrupt) |
 * | `GET cache/<key>` | — | the setup cache entry's tar, its sha256 in {@link CACHE_SHA256_HEADER} |
 * | `PUT cache/<key>` | the tar, with `content-length` and its sha256 | 201 |
 *
 * The cache routes (see `src/devbox/hub/cache/`) stream raw bytes, not JSON: a miss is a 404
 * carrying {@link CACHE_MISS_HEADER}; a 404 without it means the hub keeps no setup cache.
 * Errors answer `{ error: message }` with 400 (bad body), 401 (wrong or missing token, and
 * nothing more is said), 404, 405, 409 (a result for a command never dispatched), 413.
 */
import { z } from "zod";
import type { CommandRequest, CommandResult, DevBoxCommand } from "../engine/commands.js";

/** Largest request body the hub reads. */
export const MAX_BODY_BYTES = 1024 * 1024;
/** Longest a `GET commands` long-poll is held open, in seconds. */
export const MAX_WAIT_SECONDS = 30;
/** The sha256 (hex) of a setup cache entry's bytes, on a `GET cache/<key>` answer and a `PUT`. */
export const CACHE_SHA256_HEADER = "x-clustercode-sha256";
/** On a 404 of `GET cache/<key>`: the hub keeps a cache, and this key is not in it. */
export const CACHE_MISS_HEADER = "x-clustercode-cache-miss";

/** Path prefix of every internal route. */
export const ROUTE_PREFIX = "/internal/devboxes/";

/** Environment variables the executor gives the agent. */
export const AGENT_ENV = {
  /** The bearer token; never passed on the command line, never passed on to commands. */
  token: "CLUSTERCODE_DEVBOX_TOKEN",
  /** The run branch the DevBox checks out and pushes checkpoints to. */
  branch: "CLUSTERCODE_BRANCH",
  /** The branch a missing run branch is created from. */
  baseBranch: "CLUSTERCODE_BASE_BRANCH",
  /** The commit the run branch is reset to: the run's last checkpoint (unset before one). */
  startSha: "CLUSTERCODE_START_SHA",
  /** The setup commands, a JSON array of strings. */
  setup: "CLUSTERCODE_SETUP",
  /** `devbox.cache`, a JSON array of `{ key, paths }`. */
  setupCache: "CLUSTERCODE_SETUP_CACHE",
  /** Where the setup cache is kept, a JSON array of directories: saves go to the first. */
  setupCacheDirs: "CLUSTERCODE_SETUP_CACHE_DIRS",
  /**
   * The names of the secrets in the agent's environment, a JSON array: their values are masked
   * in all output the agent logs or reports.
   */
  secrets: "CLUSTERCODE_SECRET_NAMES",
  /** The agent CLIs whose `--version` the agent reports when ready, a JSON array. */
  harnesses: "CLUSTERCODE_HARNESSES",
  /** The run id, passed on to every command. */
  runId: "CLUSTERCODE_RUN_ID",
  /** Milliseconds between heartbeats (default 3000). */
  heartbeatMs: "CLUSTERCODE_DEVBOX_HEARTBEAT_MS",
  /**
   * Milliseconds without reaching the API after which the agent gives up (default 15000); the
   * runtime reads the same variable for the hub's lapse, so both sides agree.
   */
  lapseMs: "CLUSTERCODE_DEVBOX_LAPSE_MS",
  /**
   * "1": the checkout's origin is the hub's git route; the agent authenticates each fetch and
   * push there with its own hub token (in that git process's environment only).
   */
  gitViaHub: "CLUSTERCODE_GIT_VIA_HUB",
  /** The hub relay's unix socket, for the agent's 127.0.0.1 gateway (local DevBoxes). */
  hubSocket: "CLUSTERCODE_HUB_SOCKET",
  /** How the DevBox is isolated ("bubblewrap", "none (...)"), reported when ready. */
  isolation: "CLUSTERCODE_DEVBOX_ISOLATION",
} as const;

/** File names in `CommandRequest.files`: they become file names and environment names. */
const FILE_NAME_PATTERN = /^[a-z][a-z0-9_]{0,39}$/;

/** Whether `name` may key `CommandRequest.files`. */
export function isValidFileName(name: string): boolean {
  return FILE_NAME_PATTERN.test(name);
}

/** The environment variable that carries the path of file `name`: brief → CLUSTERCODE_BRIEF_FILE. */
export function fileEnvName(name: string): string {
  return `CLUSTERCODE_${name.toUpperCase()}_FILE`;
}

/** Names are checked by a refinement so the message names the offending key. */
const filesSchema = z.record(z.string(), z.string()).superRefine((files, ctx) => {
  for (const name of Object.keys(files)) {
    if (!isValidFileName(name)) {
      ctx.addIssue({
        code: "custom",
        message: "file names are lower-case identifiers (a-z, 0-9, _), at most 40 characters",
        path: [name],
      });
    }
  }
});

/** A `DevBoxCommand` on the wire. */
const devBoxCommandSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("script"), script: z.string() }),
  z.object({
    type: z.literal("agent"),
    argv: z.array(z.string()).min(1),
    prompt: z.string(),
    model: z.string().exactOptional(),
    costJsonPath: z.string().min(1).exactOptional(),
    usageJsonPath: z.string().min(1).exactOptional(),
    usagePaths: z
      .object({
        inputTokens: z.string().min(1),
        outputTokens: z.string().min(1),
        cachedInputTokens: z.string().min(1).exactOptional(),
      })
      .exactOptional(),
    priceFromUsage: z.boolean().exactOptional(),
    credentials: z
      .object({
        env: z.array(z.string().min(1)),
        homeFiles: z.array(z.string().min(1)).exactOptional(),
      })
      .exactOptional(),
  }),
  z.object({ type: z.literal("checkpoint"), message: z.string().min(1) }),
]);

/** A `CommandRequest` on the wire. */
export const commandRequestSchema = z.object({
  commandId: z.string().min(1),
  command: devBoxCommandSchema,
  files: filesSchema.exactOptional(),
  spendLimitUsd: z.number().nonnegative().exactOptional(),
  proxiedUsd: z.number().nonnegative().exactOptional(),
}) satisfies z.ZodType<CommandRequest>;

/** A `CommandResult` on the wire (the body of `POST results`). */
export const commandResultSchema = z.object({
  commandId: z.string().min(1),
  exitCode: z.number().int(),
  output: z.string(),
  durationMs: z.number().nonnegative(),
  costUsd: z.number().nonnegative().exactOptional(),
  usage: z
    .object({
      inputTokens: z.number().int().nonnegative(),
      outputTokens: z.number().int().nonnegative(),
      cachedInputTokens: z.number().int().nonnegative().exactOptional(),
    })
    .exactOptional(),
  refused: z.string().exactOptional(),
  sha: z.string().exactOptional(),
  interrupted: z.boolean().exactOptional(),
  outputFile: z.string().max(65_537).exactOptional(),
}) satisfies z.ZodType<CommandResult>;

type SameKeys<A, B> = [keyof A] extends [keyof B]
  ? [keyof B] extends [keyof A]
    ? true
    : false
  : false;
type Variant<U, T extends DevBoxCommand["type"]> = Extract<U, { type: T }>;
type WireCommand = z.output<typeof commandRequestSchema>["command"];
type Assert<T extends true[]> = T;

/**
 * Fails to compile when a field is added to the shared command types but not to these schemas
 * (zod would drop it silently on the wire).
 */
export type WireFieldsMatch = Assert<
  [
    SameKeys<z.output<typeof commandRequestSchema>, CommandRequest>,
    // The hub adds `proxiedCostUsd`; a DevBox's own figure for it is dropped.
    SameKeys<z.output<typeof commandResultSchema>, Omit<CommandResult, "proxiedCostUsd">>,
    SameKeys<Variant<WireCommand, "script">, Variant<DevBoxCommand, "script">>,
    SameKeys<Variant<WireCommand, "agent">, Variant<DevBoxCommand, "agent">>,
    SameKeys<Variant<WireCommand, "checkpoint">, Variant<DevBoxCommand, "checkpoint">>,
  ]
>;

/** Body of `POST ready`: whether clone, branch checkout and setup succeeded. */
export const readyBodySchema = z.object({
  ok: z.boolean(),
  error: z.string().exactOptional(),
  sha: z.string().exactOptional(),
  /** Each agent CLI's `--version` answer (first line), by argv[0]. */
  harness: z.record(z.string().max(200), z.string().max(200)).exactOptional(),
  /** How the DevBox is isolated, as the executor told it. */
  isolation: z.string().max(200).exactOptional(),
});
/** Body of `POST ready`. */
export type ReadyBody = z.output<typeof readyBodySchema>;

/** Body of `POST heartbeat`: the command running now, if any. */
export const heartbeatBodySchema = z.object({ running: z.string().exactOptional() });
/** Body of `POST heartbeat`. */
export type HeartbeatBody = z.output<typeof heartbeatBodySchema>;

/** The answer to a long-poll: commands to run, or the order to exit. */
export const pollResponseSchema = z.union([
  z.object({ stop: z.literal(true) }),
  z.object({ commands: z.array(commandRequestSchema) }),
]);
/** The answer to `GET commands`. */
export type PollResponse = z.output<typeof pollResponseSchema>;

/**
 * The answer to `POST heartbeat`: `stop` once the DevBox is released or declared lost;
 * `interrupt` names the running command when the runtime wants it stopped (its node timed out
 * or the run's wall clock ran out), so the DevBox can go on to checkpoint the work.
 */
export const heartbeatResponseSchema = z.union([
  z.object({ stop: z.literal(true) }),
  z.object({ ok: z.literal(true), interrupt: z.string().exactOptional() }),
]);
/** The answer to `POST heartbeat`. */
export type HeartbeatResponse = z.output<typeof heartbeatResponseSchema>;

/** The path of `route` for one DevBox. */
export function devboxRoute(
  devboxId: string,
  route: "ready" | "commands" | "results" | "heartbeat",
) {
  return `${ROUTE_PREFIX}${encodeURIComponent(devboxId)}/${route}`;
}

/** The path of setup cache entry `key` of DevBox `devboxId` (see the cache routes above). */
export function cacheRoute(devboxId: string, key: string): string {
  return `${ROUTE_PREFIX}${encodeURIComponent(devboxId)}/cache/${key}`;
}

/** A one-line description of why `schema` refused a value, for a 400 answer. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => `${issue.path.length > 0 ? issue.path.join(".") : "body"}: ${issue.message}`)
    .join("; ");
}
