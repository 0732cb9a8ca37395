import { completeNode, endRun } from "./flow.js";
import type { RunEvent } from "./model.js";
import { onPrototypeVerdict } from "./prototype.js";
import type { Transition } from "./transition.js";
import { addCost } from "./work.js";

/**
 * A judge answered (or failed) for the active agent decision or prototype. Its verdict,
 * reasoning, model, tokens and cost become evidence and its cost counts against the run budget.
 * A decision routes on a label among its outgoing edges; a failure or a label outside them takes
 * the `default` edge when there is one, else fails the node with the reason. A prototype whose
 * judge gave no valid choice takes its first passing variant.
 */
export function onJudge(
  t: Transition,
  event: Extract<RunEvent, { type: "judge.verdict" | "judge.failed" }>,
): string | undefined {
  const active = t.snapshot.active;
  const progress = active?.progress;
  const prototype = progress?.kind === "prototype" ? progress.judgeRequest : undefined;
  const decision = progress?.kind === "judge" ? progress.requestId : undefined;
  if (active === undefined || (event.requestId !== prototype && event.requestId !== decision)) {
    return "stale verdict";
  }
  const verdict = event.type === "judge.verdict" ? event : undefined;
  t.record("decision.evaluated", {
    node: active.node,
    evaluator: "agent",
    ...(event.type === "judge.failed"
      ? {
          error: event.reason,
          ...(event.model === undefined ? {} : { model: event.model }),
          ...(event.costUsd === undefined ? {} : { costUsd: event.costUsd }),
          ...(event.usage === undefined ? {} : { usage: event.usage }),
        }
      : {
          verdict: event.label,
          reasoning: event.reasoning,
          model: event.model,
          costUsd: event.costUsd,
          ...(event.usage === undefined ? {} : { usage: event.usage }),
        }),
  });
  if (!addCost(t, event.costUsd)) return undefined;
  if (prototype !== undefined) {
    onPrototypeVerdict(t, verdict?.label, verdict?.reasoning ?? "");
    return undefined;
  }
  const edges = t.definition.workflow.edges.filter((edge) => edge.from === active.node);
  const allowed = edges
    .map((edge) => edge.label)
    .filter((label) => label !== "exhausted" && label !== "default");
  if (verdict !== undefined && allowed.includes(verdict.label)) {
    completeNode(t, verdict.label);
    return undefined;
  }
  const reason =
    event.type === "judge.failed"
      ? `judge failed: ${event.reason}`
      : `judge answered "${event.label}", which is not one of ${allowed.join(", ")}`;
  if (edges.some((edge) => edge.label === "default")) completeNode(t, "default", reason);
  else endRun(t, "failed", reason, active.node);
  return undefined;
}
