import { createHash } from "node:crypto";
import { resolveEngines } from "../agents/engines.js";
import type { RemovedText, RunDefinition, RunDocument } from "../engine/model.js";
import { createSnapshot } from "../engine/step.js";
import { storedDocument } from "../store/run-repository.js";
import { StoreError } from "../store/store-error.js";
import type { Store } from "../store/store.js";
import type { Workflow } from "../workflow/workflow.schema.js";
import { createRun } from "./admission.js";
import { isActive, runBranch, runsOfIssue } from "./issue-runs.js";

/** One run of a workflow asked for on an issue, by a trigger with an idempotency key. */
export interface IssueRunRequest {
  /** Owner/name of the repository (as the store names it). */
  repo: string;
  baseBranch: string;
  issue: number;
  workflow: Workflow;
  /** Where the workflow was read from. */
  source: { path: string; sha: string };
  /** Unique per trigger (a delivery id, a schedule firing): the run id derives from it. */
  key: string;
  brief: { text: string; removed: RemovedText };
  startedBy: string;
}

/**
 * What came of a request: the run created queued ("admit": start it when admission allows),
 * found already created by the same trigger ("admit" again while it is still queued, else
 * "started"), or refused because another run of the workflow is active on the issue ("busy").
 */
export type IssueRunOutcome =
  | { runId: string; outcome: "admit" | "started" }
  | { runId: string; outcome: "busy"; activeRunId: string };

/**
 * Creates a run for an issue, keeping one active run per issue and workflow: the check for an
 * active run and the create are one step across replicas, under a trigger lock in the store.
 * The run id derives from the trigger key, so a duplicated trigger finds its run already
 * created and creates nothing twice.
 */
export async function createIssueRun(
  deps: { store: Store; now: () => number },
  request: IssueRunRequest,
): Promise<IssueRunOutcome> {
  const runId = runIdOf(request.key, request.workflow.name);
  // The lock is held by the run id, so the same trigger delivered twice shares it; its
  // conditional create lets only one of them make the run.
  const lock = `trigger:${request.repo}#${request.issue}#${request.workflow.name}`;
  await takeTriggerLock(deps, lock, runId);
  try {
    return await createUnlessBusy(deps, request, runId);
  } finally {
    await deps.store.releaseLease(lock, runId);
  }
}

/** The id of the run a trigger (by its idempotency key) starts for a workflow. */
export function runIdOf(key: string, workflow: string): string {
  return `r${createHash("sha256").update(`${key}\n${workflow}`).digest("hex").slice(0, 12)}`;
}

/** A trigger lock's lease, how long to wait between tries, and how many tries (over the lease). */
const LOCK_MS = 30_000;
const LOCK_WAIT_MS = 200;
const LOCK_ATTEMPTS = Math.ceil(LOCK_MS / LOCK_WAIT_MS) + 5;

/** Takes a trigger lock, waiting (boundedly) while another trigger holds it. */
async function takeTriggerLock(
  deps: { store: Store; now: () => number },
  name: string,
  holder: string,
): Promise<void> {
  for (let attempt = 0; attempt < LOCK_ATTEMPTS; attempt++) {
    if (await deps.store.acquireLease(name, holder, deps.now(), LOCK_MS)) return;
    await new Promise((resolve) => setTimeout(resolve, LOCK_WAIT_MS));
  }
  throw new StoreError("condition_failed", `${name} stayed held by another trigger`, {
    retryable: true,
  });
}

async function createUnlessBusy(
  deps: { store: Store; now: () => number },
  request: IssueRunRequest,
  runId: string,
): Promise<IssueRunOutcome> {
  const { workflow } = request;
  const existing = await runsOfIssue(deps.store, request.repo, request.issue);
  const seen = existing.find((run) => run.stored.runId === runId);
  if (seen !== undefined)
    return { runId, outcome: seen.stored.status === "queued" ? "admit" : "started" };
  const busy = existing.find(
    (run) => run.stored.workflow === workflow.name && isActive(run.stored.status),
  );
  if (busy !== undefined) return { runId, outcome: "busy", activeRunId: busy.stored.runId };
  const definition: RunDefinition = {
    runId,
    trigger: request.key,
    source: request.source,
    workflow,
    baseBranch: request.baseBranch,
    branch: runBranch(request.issue, runId),
    brief: request.brief.text,
    briefCleaned: { ...request.brief.removed },
    startedBy: request.startedBy,
    engines: resolveEngines(workflow),
  };
  const now = deps.now();
  const document: RunDocument = { definition, state: createSnapshot(definition, now) };
  const created = await createRun(
    deps.store,
    {
      runId,
      version: 1,
      repo: request.repo,
      workflow: workflow.name,
      status: "queued",
      snapshot: storedDocument(document),
      outbox: [],
      createdAt: now,
      updatedAt: now,
      issue: request.issue,
    },
    workflow,
  );
  return { runId, outcome: created ? "admit" : "started" };
}
