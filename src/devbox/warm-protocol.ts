/**
 * The hub's routes for warm ECS DevBoxes: a task started before any run claims it holds only a
 * single-use warm identity (`Authorization: Bearer <warm token>`), which can do exactly two
 * things, both under `/internal/warm/<warmId>/`:
 *
 * | route | body | answer |
 * |---|---|---|
 * | `GET git/<owner>/<name>.git/…` | git smart HTTP | the default branch only, read-only |
 * | `POST ready` | {@link WarmReadyBody} | `{ ok: true }` |
 * | `GET claim?wait=S` | — | {@link ClaimPollResponse}, after at most `min(S, 30)` seconds |
 *
 * Once a claim was handed out the identity is revoked: every route answers 401. `GET
 * /internal/warm` answers 204 with no authentication: a hub is here (other replicas ask it
 * before they stop warm tasks they believe orphaned).
 */
import { z } from "zod";

/** Path prefix of the warm routes. */
export const WARM_ROUTE_PREFIX = "/internal/warm/";

/** Environment variables of a warm task, read by the DevBox image's entrypoint. */
export const WARM_ENV = {
  /** The warm identity's id; set only on warm tasks. */
  warmId: "CLUSTERCODE_WARM_ID",
  /** Its token; the entrypoint hands it to the agent on stdin and unsets it. */
  token: "CLUSTERCODE_WARM_TOKEN",
  /** The default branch the warm task clones. */
  branch: "CLUSTERCODE_WARM_BRANCH",
} as const;

/** Body of `POST ready`: the commit the warm checkout is at, and whether its setup passed. */
export const warmReadySchema = z.object({
  sha: z.string().regex(/^[0-9a-f]{40,64}$/),
  setUp: z.boolean(),
});
/** Body of `POST ready`. */
export type WarmReadyBody = z.output<typeof warmReadySchema>;

/**
 * What a claim hands a warm task: the DevBox it becomes, that DevBox's hub token, and the
 * environment a cold task of that DevBox would have been started with (run, branches, setup,
 * the clone URL of its own git route, placeholder provider keys, the egress proxy).
 */
export const warmClaimSchema = z.object({
  devboxId: z.string().min(1),
  token: z.string().min(1),
  env: z.record(z.string(), z.string()),
});
/** What a claim hands a warm task. */
export type WarmClaim = z.output<typeof warmClaimSchema>;

/** The answer to `GET claim`: the claim, or nothing yet (ask again). */
export const claimPollSchema = z.union([
  z.object({ claim: warmClaimSchema }),
  z.object({ wait: z.literal(true) }),
]);
/** The answer to `GET claim`. */
export type ClaimPollResponse = z.output<typeof claimPollSchema>;

/** The path of `route` for one warm identity. */
export function warmRoute(warmId: string, route: "ready" | "claim" | "git"): string {
  return `${WARM_ROUTE_PREFIX}${encodeURIComponent(warmId)}/${route}`;
}

/**
 * The hub's side of warm identities, as an executor sees it: issue one per warm task, see
 * which are ready, offer one a claim, revoke it. Implemented by the hub's `WarmDesk`.
 */
export interface WarmIdentities {
  /** A new single-use identity for a warm task of `repo` (`owner/name`) at `branch`. */
  issue(repo: string, branch: string): WarmIdentity;
  /** Whether the task of `warmId` reported ready and waits for a claim. */
  isReady(warmId: string): boolean;
  /**
   * Offers `claim` to the task of `warmId`: true once its long-poll took it (its identity is
   * then revoked), false when it was not ready or did not take it within `timeoutMs` (its
   * identity is then revoked too, so it can never take it later).
   */
  offer(warmId: string, claim: WarmClaim, timeoutMs: number): Promise<boolean>;
  /** Revokes the identity (its task is being stopped); safe for unknown ids. */
  revoke(warmId: string): void;
}

/** A warm identity as its task is started with it. */
export interface WarmIdentity {
  warmId: string;
  token: string;
  /** The hub's base URL. */
  apiUrl: string;
  /** Where the task clones the default branch from (the hub's read-only warm git route). */
  gitUrl: string;
}
