import type { DeliveryRecord } from "../../store/store.js";

/**
 * The lane a delivery is handled in: the deliveries of one issue or pull request one after
 * another, in their order; any other delivery in a lane of its own. Lanes run side by side, so
 * a delivery waiting (on a trigger lock, say) holds up only its own issue.
 */
export function laneOf(delivery: DeliveryRecord): string {
  const payload = delivery.payload as {
    repository?: { full_name?: unknown };
    issue?: { number?: unknown };
    pull_request?: { number?: unknown };
    number?: unknown;
  } | null;
  const repo = payload?.repository?.full_name;
  const issue = payload?.issue?.number ?? payload?.pull_request?.number ?? payload?.number;
  if (typeof repo === "string" && typeof issue === "number") return `${repo}#${issue}`;
  return `delivery:${delivery.deliveryId}`;
}
