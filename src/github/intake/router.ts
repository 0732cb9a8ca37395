import type { DeliveryRecord } from "../../store/store.js";
import { checkPayload, fitsPayload } from "./payload-schemas.js";
import {
  buttonOf,
  failedRunCheckOf,
  onCheckRun,
  type CheckRunPayload,
} from "../handlers/check-run.js";
import { installs, onInstallation, type InstallationPayload } from "../handlers/installation.js";
import { failedSuiteRunOf, onCheckSuite, type CheckSuitePayload } from "../handlers/check-suite.js";
import { commandOf, onIssueComment, type IssueCommentPayload } from "../handlers/issue-comment.js";
import { labelOf, onIssues, type IssuesPayload } from "../handlers/issues.js";
import {
  reviewOf,
  onPullRequestReview,
  type PullRequestReviewPayload,
} from "../handlers/pull-request-review.js";
import {
  changesPullRequest,
  closedRunOf,
  movedRunOf,
  onPullRequest,
  type PullRequestPayload,
} from "../handlers/pull-request.js";
import { onPush, trimPush, workflowChangesOf, type PushPayload } from "../handlers/push.js";
import type { GitHubAuth } from "../client/github.js";
import type { AppServices, HandlerContext } from "../handlers/services.js";

/**
 * An event's handler, the pure test of whether a payload gives it anything to do, and what of
 * a big payload to record (all of it by default).
 */
interface Route<P> {
  wants(payload: P): boolean;
  handle(payload: P, ctx: HandlerContext): Promise<void>;
  trim?(payload: P): P;
}

/**
 * Types a route's payload for its functions. Payloads are GitHub's JSON: each route reads its
 * event's payload as that event's type (method parameters are bivariant, so it fits the table).
 */
function route<P>(r: Route<P>): Route<unknown> {
  return r;
}

const ROUTES: Readonly<Record<string, Route<unknown>>> = {
  issues: route<IssuesPayload>({ wants: (p) => labelOf(p) !== undefined, handle: onIssues }),
  issue_comment: route<IssueCommentPayload>({
    wants: (p) => commandOf(p) !== undefined,
    handle: onIssueComment,
  }),
  pull_request: route<PullRequestPayload>({
    wants: (p) =>
      changesPullRequest(p) || closedRunOf(p) !== undefined || movedRunOf(p) !== undefined,
    handle: onPullRequest,
  }),
  pull_request_review: route<PullRequestReviewPayload>({
    wants: (p) => reviewOf(p) !== undefined,
    handle: onPullRequestReview,
  }),
  check_run: route<CheckRunPayload>({
    wants: (p) => buttonOf(p) !== undefined || failedRunCheckOf(p) !== undefined,
    handle: onCheckRun,
  }),
  check_suite: route<CheckSuitePayload>({
    wants: (p) => failedSuiteRunOf(p) !== undefined,
    handle: onCheckSuite,
  }),
  push: route<PushPayload>({
    wants: (p) => workflowChangesOf(p) !== undefined,
    handle: onPush,
    trim: trimPush,
  }),
  installation: route<InstallationPayload>({ wants: installs, handle: onInstallation }),
  installation_repositories: route<InstallationPayload>({
    wants: installs,
    handle: onInstallation,
  }),
};

/**
 * Could this delivery make the app do anything? Only such deliveries are recorded: the others
 * (events or actions the app ignores, comments without a command, deliveries without an
 * installation) are acknowledged and dropped, since there is nothing to lose. A payload the
 * test cannot read is recorded, and its handler reports what is wrong with it.
 */
export function wantsDelivery(event: string, payload: unknown): boolean {
  const found = ROUTES[event];
  if (found === undefined) return false;
  const installation = (payload as { installation?: { id?: unknown } } | null)?.installation;
  if (typeof installation?.id !== "number") return false;
  // A payload without the fields the app reads is recorded, to be refused with why.
  if (!fitsPayload(event, payload)) return true;
  try {
    return found.wants(payload);
  } catch {
    return true;
  }
}

/** What to record of a wanted delivery's payload (a malformed one as it came). */
export function recordedPayload(event: string, payload: unknown): unknown {
  if (!fitsPayload(event, payload)) return payload;
  return ROUTES[event]?.trim?.(payload) ?? payload;
}

/**
 * Hands a recorded delivery to the handler of its event when it has anything to do; throws a
 * MalformedPayloadError (not retryable: it is logged, and the delivery is done) for a payload
 * without the fields the handler reads.
 */
export async function routeDelivery(delivery: DeliveryRecord, ctx: HandlerContext): Promise<void> {
  const found = ROUTES[delivery.event];
  if (found === undefined) return;
  checkPayload(delivery.event, delivery.payload);
  if (found.wants(delivery.payload)) await found.handle(delivery.payload, ctx);
}

/**
 * Processes one recorded delivery with its installation's client (none before the app has its
 * credentials: `auth` gives nothing yet).
 */
export async function handleDelivery(
  delivery: DeliveryRecord,
  auth: { peek(): GitHubAuth | undefined },
  services: AppServices,
): Promise<void> {
  const payload = delivery.payload as {
    installation?: { id?: unknown } | null;
    repository?: { full_name?: unknown } | null;
  } | null;
  const id = payload?.installation?.id;
  const clients = auth.peek();
  if (typeof id !== "number" || clients === undefined) return;
  // Read before the payload is checked (routeDelivery refuses a malformed one with why).
  const repo = payload?.repository?.full_name;
  if (typeof repo === "string") services.installations.remember(repo, id);
  const gh = await clients.installation(id);
  await routeDelivery(delivery, { gh, deliveryId: delivery.deliveryId, services });
}
