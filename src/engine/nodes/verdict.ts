import { addCost } from "../cost.js";
import type { Transition } from "../transition.js";
import type { JudgeEvent } from "./node-behaviour.js";

/**
 * Records a judge's answer (or failure) for the active node: its verdict, reasoning, model,
 * tokens and cost become evidence, and its cost counts against the run budget. False when that
 * cost broke the budget (the node is being stopped).
 */
export function recordVerdict(t: Transition, event: JudgeEvent): boolean {
  t.record("decision.evaluated", {
    node: t.active.node,
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
  return addCost(t, event.costUsd);
}
