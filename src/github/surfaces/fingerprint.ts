import { createHash } from "node:crypto";

/** A short, stable fingerprint of what was written (a body, a check run's fields). */
export function fingerprint(text: string): string {
  return createHash("sha256").update(text).digest("base64url");
}
