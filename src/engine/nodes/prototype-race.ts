import type { NodeProgress, VariantState } from "../model.js";
import { prototypeJudgeRequest } from "../judging.js";
import type { Transition } from "../transition.js";
import { activeNodeOf, type NodeOf } from "./active-node.js";

type PrototypeProgress = Extract<NodeProgress, { kind: "prototype" }>;

/** The active prototype node and its race. */
export function prototypeOf(t: Transition): {
  node: NodeOf<"prototype">;
  progress: PrototypeProgress;
} {
  const node = activeNodeOf(t, "prototype");
  const progress = t.active.progress;
  if (progress.kind !== "prototype") throw new Error("programmer error: not a prototype");
  return { node, progress };
}

/** Ends a stopped prototype once no variant is still checkpointing; true when it was stopped. */
export function finishWhenSaved(t: Transition): boolean {
  const { progress } = prototypeOf(t);
  const pending = t.active.pendingOutcome;
  if (pending?.stop === undefined) return false;
  if (!progress.variants.some((variant) => variant.phase === "checkpoint")) {
    t.finishStop(pending.stop, pending.reason ?? pending.outcome);
  }
  return true;
}

/** Picks the winner when the race allows it: the first to pass, or the judge's choice. */
export function decide(t: Transition): void {
  if (finishWhenSaved(t)) return;
  const { node, progress } = prototypeOf(t);
  const passed = progress.variants.filter((variant) => variant.phase === "passed");
  const done = progress.variants.every(
    (variant) => variant.phase === "passed" || variant.phase === "failed",
  );
  const first = passed[0];
  if (node.select === "first" && first !== undefined) {
    win(t, first, "first to pass its gates");
  } else if (done && first === undefined) {
    recordTable(t);
    t.completeNode("failed", "no variant passed its gates");
  } else if (done && passed.length === 1 && first !== undefined) {
    win(t, first, "the only variant that passed its gates");
  } else if (done && progress.judgeRequest === undefined) {
    const requestId = `j${t.snapshot.seq}`;
    progress.judgeRequest = requestId;
    t.emit(prototypeJudgeRequest(t.definition, t.snapshot, requestId));
  }
}

/** The judge of a prototype answered: its choice wins, else the first passing variant. */
export function onPrototypeVerdict(
  t: Transition,
  label: string | undefined,
  reasoning: string,
): void {
  const { progress } = prototypeOf(t);
  const passed = progress.variants.filter((variant) => variant.phase === "passed");
  const chosen = passed.find((variant) => `v${variant.index + 1}` === label) ?? passed[0];
  if (chosen === undefined) throw new Error("programmer error: judged with no passing variant");
  win(
    t,
    chosen,
    label === undefined
      ? `judge gave no valid choice (${reasoning}); first passing variant`
      : reasoning,
  );
}

/**
 * The winner's commits become the run branch's (a `branch.move` effect: the run's branch never
 * changes name, the variant branch stays as evidence) and every DevBox of the race is released:
 * later nodes claim theirs on the run branch, which checkpoints then push.
 */
function win(t: Transition, winner: VariantState, why: string): void {
  const { progress } = prototypeOf(t);
  const s = t.snapshot;
  for (const variant of progress.variants) {
    if (variant.phase === "failed") continue;
    // A variant that passed and lost the pick stays passed; only unfinished ones are cancelled.
    if (variant !== winner && variant.phase !== "passed") variant.phase = "cancelled";
    t.releaseDevBox(variant.devbox);
  }
  const branch = t.definition.branch;
  t.emit({
    type: "branch.move",
    branch,
    from: winner.devbox.branch,
    ...(winner.sha === undefined ? {} : { sha: winner.sha }),
  });
  s.branch = branch;
  s.branchPushed = true;
  if (winner.sha !== undefined) s.lastSha = winner.sha;
  t.record("prototype.selected", {
    node: t.active.node,
    variant: winner.index + 1,
    branch,
    variantBranch: winner.devbox.branch,
    why,
  });
  recordTable(t, winner);
  t.completeNode("succeeded");
}

/** The variant table: engine, model, duration, cost, gates and verdict of every variant. */
function recordTable(t: Transition, winner?: VariantState): void {
  const { node, progress } = prototypeOf(t);
  const table = progress.variants.map((variant) => ({
    variant: variant.index + 1,
    engine: node.variants[variant.index]?.engine,
    model: node.variants[variant.index]?.model,
    durationMs: variant.durationMs,
    costUsd: variant.costUsd,
    gates: variant.gates ?? [],
    verdict: variant === winner ? "won" : variant.phase,
  }));
  t.record("prototype.variants", { node: t.active.node, variants: table });
}
