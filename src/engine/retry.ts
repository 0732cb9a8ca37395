import { parseDuration } from "../workflow/duration.js";
import { enterNode } from "./flow.js";
import { addFeedback } from "./feedback-log.js";
import type { RunEvent, Visit } from "./model.js";
import { NODE_KINDS } from "./nodes/node-kinds.js";
import type { Transition } from "./transition.js";

/** Id of the timer that bounds the whole run. */
export const RUN_WALL_CLOCK_TIMER = "run:wall-clock";
/** A run's wall clock when its workflow sets none. */
export const DEFAULT_RUN_WALL_CLOCK = "24h";

type RetryEvent = Extract<RunEvent, { type: "run.retry" }>;

/** The run's wall clock, as the workflow sets it. */
export function runWallClock(t: Transition): string {
  return t.definition.workflow.budget?.wall_clock ?? DEFAULT_RUN_WALL_CLOCK;
}

/**
 * Re-enters a failed run at its failed node (or a lost node at once) with a new attempt. Budgets
 * carry over: the loop's iterations and wall clock, the run's spend and its wall clock. A retry
 * that would start with a budget already used up is refused unless it asks for `resetBudget`,
 * which is recorded with who asked. Returns why a retry was refused.
 */
export function retry(t: Transition, event: RetryEvent): string | undefined {
  const s = t.snapshot;
  const lost = s.awaiting?.kind === "lost" ? s.awaiting.node : undefined;
  const node = lost ?? (s.status === "failed" ? s.failedNode : undefined);
  if (node === undefined) {
    return s.status === "failed"
      ? "this run failed before any node ran, so there is nothing to retry"
      : "only a failed run, or a lost node waiting for an answer, can be retried";
  }
  const reset = event.resetBudget === true;
  const previous = s.visits.findLast((visit) => visit.node === node);
  const deadline =
    s.deadline ?? (s.visits[0]?.startedAt ?? s.startedAt) + parseDuration(runWallClock(t));
  const usedUp = [
    ...(previous === undefined ? [] : [budgetUsedUp(t, previous)]),
    lost === undefined && t.at >= deadline
      ? `the run used its ${runWallClock(t)} wall clock`
      : undefined,
    runSpendUsedUp(t),
  ].filter((why) => why !== undefined);
  if (usedUp.length > 0 && !reset) {
    return `${usedUp.join("; ")}; retry with --reset-budget to give it a fresh budget`;
  }
  // Attempts are counted per visit: the retry is the next attempt at the node's last visit.
  const attempt = (previous?.attempt ?? 0) + 1;
  delete s.active;
  recordRetry(t, event, node, attempt, usedUp);
  if (lost === undefined) {
    delete s.reason;
    s.deadline = reset ? t.at + parseDuration(runWallClock(t)) : deadline;
    t.setTimer(RUN_WALL_CLOCK_TIMER, s.deadline);
  }
  const carry =
    reset || previous === undefined
      ? { iterations: 0 }
      : { iterations: previous.iterations ?? 0, since: previous.budgetSince ?? previous.startedAt };
  enterNode(t, node, attempt, { lostRerun: true, ...carry });
  return undefined;
}

/** Records who retried the node and why, as evidence and feedback; a reset starts the spend anew. */
function recordRetry(
  t: Transition,
  event: RetryEvent,
  node: string,
  attempt: number,
  usedUp: string[],
): void {
  const s = t.snapshot;
  const reset = event.resetBudget === true;
  const where = event.where === undefined ? {} : { where: event.where };
  t.record("run.retried", {
    node,
    attempt,
    actor: event.actor,
    ...(reset ? { resetBudget: true } : {}),
    ...where,
    ...pinnedVersion(t, event.workflowVersion),
  });
  addFeedback(t, {
    source: "retry",
    node,
    summary: `retried by ${event.actor}${s.reason === undefined ? "" : ` after: ${s.reason}`}`,
    actor: event.actor,
    ...(event.where === undefined ? {} : { url: event.where }),
  });
  if (reset) {
    t.record("budget.reset", { node, actor: event.actor, usedUp, spentUsd: s.costUsd, ...where });
    s.budgetBaseUsd = s.costUsd;
  }
}

/** Why the node of `visit` cannot go on without a fresh budget, as its kind says. */
function budgetUsedUp(t: Transition, visit: Visit): string | undefined {
  return NODE_KINDS[t.node(visit.node).kind].budgetUsedUp?.(t, visit);
}

/** Why the run's spend leaves no room, if `budget.max_cost_usd` is used up. */
function runSpendUsedUp(t: Transition): string | undefined {
  const s = t.snapshot;
  const max = t.definition.workflow.budget?.max_cost_usd;
  const spent = s.costUsd - (s.budgetBaseUsd ?? 0);
  if (max === undefined || spent < max) return undefined;
  return `the run spent $${spent.toFixed(2)} of its $${max} budget`;
}

/**
 * Which graph version a retried run goes on with: always the one it pinned at its start, and
 * when the workflow file has changed since, the version the file has now (which it does not run).
 */
function pinnedVersion(t: Transition, now: string | undefined): Record<string, string> {
  const pinned = t.definition.source?.sha;
  if (pinned === undefined) return {};
  return now === undefined || now === pinned
    ? { graphVersion: pinned }
    : { graphVersion: pinned, workflowChangedTo: now };
}
