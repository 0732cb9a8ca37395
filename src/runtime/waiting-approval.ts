import type { RunDocument } from "../engine/model.js";

/** The approval a run waits on: its node, and who may answer it (undefined: write access). */
export interface WaitingApproval {
  node: string;
  approvers: string[] | undefined;
}

/**
 * Whether `run` waits on an approval that an answer may still answer, the one rule every way of
 * answering (a command, a review, a check-run button, a run page) goes through: it must wait on
 * one; a button or page answers only the visit it showed (`visit`); an approval counts only
 * while the run branch's head on GitHub (`branchHead`, null: no such branch; undefined: not
 * asked) is the run's last checkpoint, and a review approves only that head (`headSha`). Says
 * why not, in a person's words, when it may not be answered.
 */
export function waitingApproval(
  run: RunDocument,
  answer: {
    runId: string;
    actor: string;
    visit?: number;
    headSha?: string;
    branchHead?: string | null;
  },
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
  const moved = branchMoved(state.lastSha, answer.branchHead);
  if (moved !== undefined) return { ok: false, why: `@${actor} ${moved(runId)}` };
  const head = answer.branchHead ?? state.lastSha;
  if (answer.headSha !== undefined && answer.headSha !== head) {
    return {
      ok: false,
      why: `@${actor} this review is stale: it saw ${answer.headSha.slice(0, 12)}, but run \`${runId}\`'s branch is now at ${head?.slice(0, 12) ?? "no commit"}. Nothing was approved: review the latest changes.`,
    };
  }
  const node = definition.workflow.nodes[state.awaiting.node];
  const approvers =
    (node?.kind === "approval" ? node.approvers : undefined) ?? definition.workflow.approvers;
  return { ok: true, approval: { node: state.awaiting.node, approvers } };
}

/**
 * When the run branch's head on GitHub is not the run's last checkpoint (someone pushed to it,
 * or deleted it), why no approval counts, for the run named; undefined when it is (or unknown).
 */
export function branchMoved(
  lastSha: string | undefined,
  head: string | null | undefined,
): ((runId: string) => string) | undefined {
  if (head === undefined || head === (lastSha ?? null)) return undefined;
  const at = head === null ? "is gone" : `moved to ${head.slice(0, 12)}`;
  const checkpoint = lastSha === undefined ? "none yet" : lastSha.slice(0, 12);
  return (runId) =>
    `run \`${runId}\`'s branch ${at}, off the run's last checkpoint (${checkpoint}): a push the run did not make, which nobody reviewed. Nothing was approved: an approval counts only for the commit the run checkpointed while the branch still shows it. Reject the approval, or send the run back with \`/rework\`, to have the change worked in.`;
}
