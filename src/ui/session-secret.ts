import { randomBytes } from "node:crypto";
import type { Store } from "../store/store.js";

/** The store setting holding the generated session secret, shared by every replica. */
export const SESSION_SECRET_SETTING = "run-pages/session-secret";

/**
 * The key signing run-page session cookies: CLUSTERCODE_SESSION_SECRET when set, else a random
 * secret generated on first start and kept in the store (a conditional write: replicas starting
 * together agree on the first one written). Never derived from another secret, so knowing the
 * webhook secret forges no session.
 */
export async function sessionSecret(
  configured: string | undefined,
  store: Pick<Store, "settingOrPropose">,
): Promise<Buffer> {
  if (configured !== undefined && configured !== "") return Buffer.from(configured, "utf8");
  const proposed = randomBytes(32).toString("base64url");
  return Buffer.from(await store.settingOrPropose(SESSION_SECRET_SETTING, proposed), "utf8");
}
