import { isFinal, type RunStatus } from "../engine/model.js";
import type { Store, StoredRun } from "../store/store.js";
import { RunRepository, type RunDocument } from "../store/run-repository.js";

/** The run branch of an issue's run: `clustercode/<issue>-<runId>`. */
export function runBranch(issue: number, runId: string): string {
  return `clustercode/${issue}-${runId}`;
}

/** Reads a run branch back into issue number and run id; undefined for other branches. */
export function parseRunBranch(branch: string): { issue: number; runId: string } | undefined {
  const match = /^clustercode\/(\d+)-([A-Za-z0-9]+)$/.exec(branch);
  return match === null ? undefined : { issue: Number(match[1]), runId: match[2] ?? "" };
}

/** A stored run with its document, as the app reads it. */
export interface IndexedRun {
  stored: StoredRun;
  document: RunDocument;
  issue: number;
}

/** Every run of a repository's issue, newest first. */
export async function runsOfIssue(
  store: Store,
  repo: string,
  issue: number,
): Promise<IndexedRun[]> {
  const runs = await new RunRepository(store).ofIssue(repo, issue);
  return runs.map(({ stored, document }) => ({ stored, document, issue }));
}

/** Is a run still going (queued, running or awaiting input)? */
export function isActive(status: string): boolean {
  return !isFinal(status as RunStatus);
}
