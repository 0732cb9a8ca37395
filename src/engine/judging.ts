import { completeNode, endRun } from "./flow.js";
import type { Effect, RunDefinition, RunEvent, RunSnapshot } from "./model.js";
import { onPrototypeVerdict } from "./prototype.js";
import type { Transition } from "./transition.js";
import { utcDay } from "./utc-day.js";
import { addCost } from "./work.js";

type JudgeRequestBody = Omit<Extract<Effect, { type: "judge.request" }>, "seq">;
type LedgerAddBody = Omit<Extract<Effect, { type: "ledger.add" }>, "seq">;

/** The judge's question for agent decision `nodeId`: choose among its outgoing labels. */
export function decisionJudgeRequest(
  definition: RunDefinition,
  snapshot: RunSnapshot,
  nodeId: string,
  requestId: string,
): JudgeRequestBody {
  const node = definition.workflow.nodes[nodeId];
  if (node?.kind !== "decision") throw new Error(`programmer error: ${nodeId} is no decision`);
  const labels = definition.workflow.edges
    .filter((edge) => edge.from === nodeId && edge.label !== undefined)
    .map((edge) => edge.label as string)
    .filter((label) => label !== "exhausted" && label !== "default");
  return {
    type: "judge.request",
    requestId,
    node: nodeId,
    question: node.question ?? "",
    labels,
    judge: node.judge ?? { provider: "anthropic", model: "" },
    branch: snapshot.branch,
    baseBranch: definition.baseBranch,
  };
}

/** The judge's question for the active prototype: choose among the variants that passed. */
export function prototypeJudgeRequest(
  definition: RunDefinition,
  snapshot: RunSnapshot,
  requestId: string,
): JudgeRequestBody {
  const active = snapshot.active;
  const node = active === undefined ? undefined : definition.workflow.nodes[active.node];
  const progress = active?.progress;
  if (active === undefined || node?.kind !== "prototype" || progress?.kind !== "prototype") {
    throw new Error("programmer error: no active prototype");
  }
  const passed = progress.variants.filter((variant) => variant.phase === "passed");
  return {
    type: "judge.request",
    requestId,
    node: active.node,
    question: `Which variant best satisfies the brief? ${node.brief}`,
    labels: passed.map((variant) => `v${variant.index + 1}`),
    judge: node.judge ?? { provider: "anthropic", model: "" },
    candidates: passed.map((variant) => ({
      label: `v${variant.index + 1}`,
      branch: variant.devbox.branch,
    })),
    // Variants started from the run branch when it was pushed, else from the base branch.
    baseBranch: snapshot.branchPushed ? snapshot.branch : definition.baseBranch,
  };
}

/**
 * The questions a run is waiting on answers to: a judge's verdict, or the daily ledger's total.
 * Their answers arrive as events from work done outside the run's transitions, so a process that
 * stopped before delivering one loses it; a restarted runtime asks these again (same request
 * ids: a late duplicate answer is refused as stale). A ledger question is asked again as a
 * check (`usd: 0`): an add without a receipt is performed again by the runtime's reconcile, so
 * the reservation is in the total either way.
 */
export function pendingQuestions(
  definition: RunDefinition,
  snapshot: RunSnapshot,
): (JudgeRequestBody | LedgerAddBody)[] {
  const progress = snapshot.active?.progress;
  if (snapshot.status !== "running" || progress === undefined) return [];
  if (progress.kind === "judge") {
    const node = snapshot.active?.node ?? "";
    return [decisionJudgeRequest(definition, snapshot, node, progress.requestId)];
  }
  if (progress.kind === "prototype" && progress.judgeRequest !== undefined) {
    return [prototypeJudgeRequest(definition, snapshot, progress.judgeRequest)];
  }
  if (progress.kind === "loop" && progress.step === "ledger") {
    return [
      {
        type: "ledger.add",
        requestId: progress.commandId,
        workflow: definition.workflow.name,
        day: utcDay(snapshot.updatedAt),
        usd: 0,
      },
    ];
  }
  return [];
}

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
