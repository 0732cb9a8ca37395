import type { RunDocument } from "../engine/model.js";

/** The approval a run waits on: its node, and who may answer it (undefined: write access). */
export interface WaitingApproval {
  node: string;
  approvers: string[] | undefined;
}

/**
 * Whether `run` waits on an approval that an answer may still answer, the one rule every way of
 * answering (a command, a review, a check-run button, a run page) goes through: it must wait on
 * one; a button or page answers only the visit it showed (`visit`); a review approves only the
 * head it saw (`headSha`). Says why not, in a person's words, when it may not be answered.
 */
export function waitingApproval(
  run: RunDocument,
  answer: { runId: string; actor: string; visit?: number; headSha?: string },
): { ok: true; approval: WaitingApproval } | { ok: false; why: string } {
  const { definition, state } = run;
  const { runId, actor } = answer;
  const stale = answer.visit !== undefined && state.active?.visit !== answer.visit;
  if (state.awaiting?.kind !== "approval" || stale) {
    return {
      ok: false,
      why: stale
        ? `@${actor} that button belongs to an earlier approval of run \`${runId}\`; answer the one waiting now.`
        : `@${actor} run \`${runId}\` is not waiting for an approval (it is ${state.status}).`,
    };
  }
  if (answer.headSha !== undefined && answer.headSha !== state.lastSha) {
    return {
      ok: false,
      why: `@${actor} this review is stale: it saw ${answer.headSha.slice(0, 12)}, but run \`${runId}\`'s branch is now at ${state.lastSha?.slice(0, 12) ?? "no commit"}. Nothing was approved: review the latest changes.`,
    };
  }
  const node = definition.workflow.nodes[state.awaiting.node];
  const approvers =
    (node?.kind === "approval" ? node.approvers : undefined) ?? definition.workflow.approvers;
  return { ok: true, approval: { node: state.awaiting.node, approvers } };
}
