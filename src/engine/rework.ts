import { DEFAULT_REWORK_ROUNDS } from "../workflow/workflow.schema.js";
import type { FeedbackItem } from "./feedback.js";
import { addFeedback } from "./feedback-log.js";
import { enterNode } from "./flow.js";
import type { RunEvent } from "./model.js";
import { RUN_WALL_CLOCK_TIMER } from "./retry.js";
import type { Transition } from "./transition.js";

type ReworkEvent = Extract<RunEvent, { type: "run.rework" }>;

const SOURCES: Record<ReworkEvent["source"], FeedbackItem["source"]> = {
  review: "review",
  comment: "rework",
  check: "check",
  conflict: "conflict",
};

/**
 * Re-opens a succeeded run at the workflow's `rework.node`, telling it why (the event's
 * feedback). Budgets, back-edge counters and the run's wall clock carry on; each re-opening is
 * a round, at most `rework.max_rounds`. When it cannot, nothing changes but the evidence
 * `rework.refused`, whose reason is returned for a reply.
 */
export function rework(t: Transition, event: ReworkEvent): string | undefined {
  const s = t.snapshot;
  const where = event.where === undefined ? {} : { where: event.where };
  const actor = event.actor === undefined ? {} : { actor: event.actor };
  const refusal = refusalOf(t);
  if (refusal !== undefined) {
    t.record("rework.refused", { source: event.source, ...actor, ...where, reason: refusal });
    return refusal;
  }
  const config = t.definition.workflow.rework;
  if (config === undefined) throw new Error("programmer error: refusalOf let no rework through");
  const round = (s.reworkRounds ?? 0) + 1;
  s.reworkRounds = round;
  t.record("rework.started", {
    node: config.node,
    round,
    maxRounds: config.max_rounds ?? DEFAULT_REWORK_ROUNDS,
    source: event.source,
    ...actor,
    ...where,
    ...(event.headSha === undefined ? {} : { headSha: event.headSha }),
    feedback: event.feedback.length,
  });
  const before = s.feedbackLog?.length ?? 0;
  addFeedback(
    t,
    {
      source: SOURCES[event.source],
      label: "rework",
      summary: `rework round ${round}: the ${event.source === "comment" ? "work was sent back" : `${event.source} sent the work back`}${event.actor === undefined ? "" : ` (${event.actor})`}`,
      ...actor,
      ...(event.where === undefined ? {} : { url: event.where }),
      ...(event.headSha === undefined ? {} : { headSha: event.headSha }),
    },
    ...event.feedback,
  );
  delete s.reason;
  delete s.failedNode;
  if (s.deadline !== undefined) t.setTimer(RUN_WALL_CLOCK_TIMER, s.deadline);
  const told = (s.feedbackLog ?? []).slice(before);
  enterNode(t, config.node, 1, { lostRerun: false, iterations: 0 }, told);
  return undefined;
}

/** Why the run cannot be re-opened, in words a reply can carry. */
function refusalOf(t: Transition): string | undefined {
  const s = t.snapshot;
  const config = t.definition.workflow.rework;
  if (config === undefined) {
    return "this run's workflow has no rework: section, so sending its work back does not re-open it; add rework: { node: <id> } or start a new run";
  }
  if (s.status !== "succeeded") {
    return `only a succeeded run can be re-opened for rework; this one is ${s.status}`;
  }
  const max = config.max_rounds ?? DEFAULT_REWORK_ROUNDS;
  if ((s.reworkRounds ?? 0) >= max) {
    return `this run used its ${max} rework round${max === 1 ? "" : "s"} (rework.max_rounds); start a new run`;
  }
  if (s.deadline !== undefined && t.at >= s.deadline) {
    return "this run used its wall clock (budget.wall_clock); start a new run";
  }
  const max$ = t.definition.workflow.budget?.max_cost_usd;
  if (max$ !== undefined && s.costUsd - (s.budgetBaseUsd ?? 0) >= max$) {
    return `this run spent its $${max$} budget (budget.max_cost_usd); start a new run`;
  }
  return undefined;
}
