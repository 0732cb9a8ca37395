import type { PagePaths } from "./view/render-run.js";

/** What a request's path names, after `/runs` or `/api/runs`. */
export type Target =
  | { kind: "index"; repo?: string }
  | { kind: "run"; repo?: string; runId: string }
  | { kind: "visit"; repo?: string; runId: string; visit: number }
  | { kind: "answer"; repo?: string; runId: string };

/** Reads what the path after `/runs` or `/api/runs` names; undefined for anything else. */
export function parseTarget(rest: string, repoSegments: 0 | 2): Target | undefined {
  const segments = rest
    .split("/")
    .filter((segment) => segment !== "")
    .map(decodeSegment);
  if (segments.some((segment) => segment === undefined)) return undefined;
  const parts = segments as string[];
  const repo = repoSegments === 2 ? parts.slice(0, 2).join("/") : undefined;
  if (parts.length < repoSegments) return undefined;
  const [runId, sub, visit, ...extra] = parts.slice(repoSegments);
  const scope = repo === undefined ? {} : { repo };
  if (extra.length > 0) return undefined;
  if (runId === undefined) return { kind: "index", ...scope };
  if (sub === undefined) return { kind: "run", runId, ...scope };
  if (sub === "answer" && visit === undefined) return { kind: "answer", runId, ...scope };
  if (sub === "visits" && visit !== undefined && /^\d{1,4}$/.test(visit))
    return { kind: "visit", runId, visit: Number(visit), ...scope };
  return undefined;
}

/** A path segment decoded, when it is a plain name (never `.` or `..`). */
export function decodeSegment(segment: string): string | undefined {
  try {
    const decoded = decodeURIComponent(segment);
    return /^[A-Za-z0-9._-]{1,200}$/.test(decoded) && decoded !== "." && decoded !== ".."
      ? decoded
      : undefined;
  } catch {
    return undefined;
  }
}

/** The paths of the index and run a target belongs to. */
export function pathsOf(target: Target): PagePaths {
  const index = target.repo === undefined ? "/runs" : `/runs/${target.repo}`;
  return { index, run: "runId" in target ? `${index}/${encodeURIComponent(target.runId)}` : index };
}
