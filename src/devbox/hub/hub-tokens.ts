import { createHmac, timingSafeEqual } from "node:crypto";

/** Compared against when a DevBox is unknown, so that the answer takes as long either way. */
const DUMMY_TOKEN = Buffer.alloc(64);

/**
 * Whether `header` is `Bearer <token>` for `token` (a DevBox's hub token, or undefined for an
 * unknown DevBox: never a match), compared in constant time.
 */
export function bearerMatches(token: Buffer | undefined, header: string | undefined): boolean {
  const match = /^Bearer ([^\s]+)$/i.exec(header ?? "");
  const provided = Buffer.from(match?.[1] ?? "", "utf8");
  const expected = token ?? DUMMY_TOKEN;
  return provided.length === expected.length && timingSafeEqual(provided, expected) && !!token;
}

/** Whether `key` is the egress key of `token` (undefined: an unknown DevBox, never a match). */
export function egressKeyMatches(token: Buffer | undefined, key: string): boolean {
  const provided = Buffer.from(key, "utf8");
  const expected = egressKey(token ?? DUMMY_TOKEN);
  return provided.length === expected.length && timingSafeEqual(provided, expected) && !!token;
}

/** A DevBox's egress key: derived from its token, from which it cannot be turned back. */
export function egressKey(token: Buffer): Buffer {
  return Buffer.from(createHmac("sha256", token).update("egress").digest("base64url"), "utf8");
}
