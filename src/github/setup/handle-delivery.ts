import type { DeliveryRecord } from "../../store/store.js";
import type { AppServices } from "../handlers/services.js";
import { routeDelivery } from "../intake/router.js";
import type { AuthSlot } from "./auth-slot.js";

/** Processes one recorded delivery with its installation's client (none before auth). */
export async function handleDelivery(
  delivery: DeliveryRecord,
  auth: AuthSlot,
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
