import { createHash } from "node:crypto";

/**
 * A workflow's graph version: the git blob SHA of its file's text, the same hash GitHub reports
 * for the file on the default branch. A run pins the version it started with; evidence, traces
 * and the run pages name it, locally and on the app alike.
 */
export function graphVersion(text: string): string {
  const bytes = Buffer.from(text, "utf8");
  return createHash("sha1").update(`blob ${bytes.length}\0`).update(bytes).digest("hex");
}
