import type { Effect, RunDefinition, RunSnapshot } from "./model.js";
import { utcDay } from "./utc-day.js";

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
