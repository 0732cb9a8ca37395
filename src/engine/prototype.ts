import type { WorkflowNode } from "../workflow/workflow.schema.js";
import type { CommandResult } from "./commands.js";
import { completeNode } from "./flow.js";
import type { NodeProgress, VariantState } from "./model.js";
import { finishStop } from "./stop.js";
import { agentCommand } from "./prompts.js";
import type { Transition } from "./transition.js";
import { prototypeJudgeRequest } from "./judging.js";
import { addCost } from "./work.js";

type PrototypeNode = Extract<WorkflowNode, { kind: "prototype" }>;
type PrototypeProgress = Extract<NodeProgress, { kind: "prototype" }>;

function prototypeOf(t: Transition): { node: PrototypeNode; progress: PrototypeProgress } {
  const node = t.node(t.active.node);
  const progress = t.active.progress;
  if (node.kind !== "prototype" || progress.kind !== "prototype") {
    throw new Error("programmer error: not a prototype");
  }
  return { node, progress };
}

/**
 * The branch of variant `index` in the run's `race`-th prototype race: `<run branch>-v<n>` in
 * the first, `<run branch>-race<k>-v<n>` after. Named from the run's own branch, never from a
 * previous winner's, so a re-entered prototype gets fresh, numbered branches.
 */
export function variantBranch(runBranch: string, race: number, index: number): string {
  return `${runBranch}${race > 1 ? `-race${race}` : ""}-v${index + 1}`;
}

/** Starts every variant of the active prototype, each in its own DevBox on its own branch. */
export function startPrototype(t: Transition): void {
  const node = t.node(t.active.node);
  if (node.kind !== "prototype") throw new Error("programmer error: not a prototype");
  const nodes = t.definition.workflow.nodes;
  const race = t.snapshot.visits.filter((visit) => nodes[visit.node]?.kind === "prototype").length;
  const variants: VariantState[] = node.variants.map((_, index) => ({
    index,
    devbox: t.claimDevBox(variantBranch(t.definition.branch, race, index)),
    phase: "claim",
    gateIndex: 0,
    gateFailures: 0,
    lostOnce: false,
    costUsd: 0,
    durationMs: 0,
  }));
  t.active.progress = { kind: "prototype", variants };
}

/** The variant running in DevBox `devboxId`, if the active node is a prototype. */
export function variantOn(t: Transition, devboxId: string): VariantState | undefined {
  const progress = t.snapshot.active?.progress;
  if (progress?.kind !== "prototype") return undefined;
  return progress.variants.find((variant) => variant.devbox.id === devboxId);
}

/** A variant's DevBox is ready (or failed to start). */
export function onVariantReady(
  t: Transition,
  variant: VariantState,
  ok: boolean,
  error?: string,
): void {
  const { node } = prototypeOf(t);
  if (!ok) {
    failVariant(t, variant, `DevBox failed to start: ${error ?? "unknown"}`);
    return;
  }
  variant.devbox.ready = true;
  const spec = node.variants[variant.index];
  if (spec === undefined) throw new Error("programmer error: no variant");
  const prompt = `${node.brief}\n\nThe requirement is in the file named by CLUSTERCODE_BRIEF_FILE.\n`;
  variant.phase = "agent";
  variant.commandId = t.dispatch(variant.devbox.id, agentCommand(t.definition, spec, prompt));
}

/** A variant's command ended. */
export function onVariantCommand(
  t: Transition,
  variant: VariantState,
  result: CommandResult,
): void {
  const { node } = prototypeOf(t);
  variant.durationMs += result.durationMs;
  variant.costUsd += result.costUsd ?? 0;
  const spec = node.variants[variant.index];
  t.record("command.finished", {
    node: t.active.node,
    variant: variant.index + 1,
    command: result.commandId,
    ...(variant.phase === "agent" && spec !== undefined
      ? { engine: spec.engine, model: spec.model }
      : {}),
    exitCode: result.exitCode,
    durationMs: result.durationMs,
    ...(result.costUsd === undefined ? {} : { costUsd: result.costUsd }),
    ...(result.usage === undefined ? {} : { usage: result.usage }),
  });
  if (!addCost(t, result.costUsd)) return;
  if (t.active.pendingOutcome?.stop !== undefined) {
    onStoppedVariantCheckpoint(t, variant, result);
    return;
  }
  const gates = node.gates ?? [];
  if (variant.phase === "checkpoint") {
    if (result.exitCode !== 0) {
      failVariant(t, variant, "checkpoint failed");
      return;
    }
    variant.phase = "passed";
    decide(t);
    return;
  }
  if (variant.phase === "gates") {
    const gate = gates[variant.gateIndex];
    if (gate !== undefined) {
      variant.gates = [...(variant.gates ?? []), { name: gate.name, exitCode: result.exitCode }];
    }
    if (result.exitCode !== 0) variant.gateFailures++;
  }
  variant.gateIndex = variant.phase === "gates" ? variant.gateIndex + 1 : 0;
  const next = gates[variant.gateIndex];
  if (variant.gateFailures > 0) {
    failVariant(t, variant, "a gate failed");
  } else if (next !== undefined) {
    variant.phase = "gates";
    variant.commandId = t.dispatch(variant.devbox.id, { type: "script", script: next.run });
  } else {
    variant.phase = "checkpoint";
    const message = `clustercode: ${t.active.node} variant ${variant.index + 1}`;
    variant.commandId = t.dispatch(variant.devbox.id, { type: "checkpoint", message });
  }
}

/** A variant's DevBox was lost: it gets one fresh DevBox, then counts as failed. */
export function onVariantLost(t: Transition, variant: VariantState, reason: string): void {
  t.record("attempt.lost", { node: t.active.node, variant: variant.index + 1, reason });
  if (variant.lostOnce || variant.phase === "passed") {
    failVariant(t, variant, `DevBox lost: ${reason}`);
    return;
  }
  t.releaseDevBox(variant.devbox);
  variant.lostOnce = true;
  variant.devbox = t.claimDevBox(variant.devbox.branch);
  variant.phase = "claim";
  variant.gateIndex = 0;
  delete variant.commandId;
}

function failVariant(t: Transition, variant: VariantState, reason: string): void {
  variant.phase = "failed";
  delete variant.commandId;
  t.record("variant.failed", { node: t.active.node, variant: variant.index + 1, reason });
  t.releaseDevBox(variant.devbox);
  decide(t);
}

/**
 * Stops the race: each variant at work is interrupted and checkpointed on its own branch, one
 * still starting is released. False when no variant has work to save.
 */
export function stopVariants(t: Transition, why: string): boolean {
  const { progress } = prototypeOf(t);
  let saving = false;
  for (const variant of progress.variants) {
    if (variant.phase === "claim") {
      variant.phase = "cancelled";
      t.releaseDevBox(variant.devbox);
    } else if (variant.phase === "agent" || variant.phase === "gates") {
      // A command whose result just came in is over already: interrupting it does nothing.
      if (variant.commandId !== undefined) {
        t.emit({
          type: "command.interrupt",
          devboxId: variant.devbox.id,
          commandId: variant.commandId,
        });
      }
      variant.phase = "checkpoint";
      const message = `clustercode: checkpoint ${t.active.node} variant ${variant.index + 1} (${why})`;
      variant.commandId = t.dispatch(variant.devbox.id, { type: "checkpoint", message });
    }
    saving ||= variant.phase === "checkpoint";
  }
  return saving;
}

/** A variant of a stopped prototype checkpointed: the stop takes effect after the last one. */
function onStoppedVariantCheckpoint(
  t: Transition,
  variant: VariantState,
  result: CommandResult,
): void {
  const pending = t.active.pendingOutcome;
  if (variant.phase !== "checkpoint" || pending?.stop === undefined) return;
  t.record(result.exitCode === 0 ? "variant.checkpoint" : "checkpoint.failed", {
    node: t.active.node,
    variant: variant.index + 1,
    branch: variant.devbox.branch,
    ...(result.sha === undefined ? {} : { sha: result.sha }),
    exitCode: result.exitCode,
  });
  variant.phase = "cancelled";
  delete variant.commandId;
  t.releaseDevBox(variant.devbox);
  finishWhenSaved(t);
}

/** Ends a stopped prototype once no variant is still checkpointing; true when it was stopped. */
function finishWhenSaved(t: Transition): boolean {
  const { progress } = prototypeOf(t);
  const pending = t.active.pendingOutcome;
  if (pending?.stop === undefined) return false;
  if (!progress.variants.some((variant) => variant.phase === "checkpoint")) {
    finishStop(t, pending.stop, pending.reason ?? pending.outcome);
  }
  return true;
}

/** Picks the winner when the race allows it: the first to pass, or the judge's choice. */
function decide(t: Transition): void {
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
    completeNode(t, "failed", "no variant passed its gates");
  } else if (done && passed.length === 1 && first !== undefined) {
    win(t, first, "the only variant that passed its gates");
  } else if (done && progress.judgeRequest === undefined) {
    const requestId = `j${t.snapshot.seq}`;
    progress.judgeRequest = requestId;
    t.emit(prototypeJudgeRequest(t.definition, t.snapshot, requestId));
  }
}

/** The judge of a prototype answered. */
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

function win(t: Transition, winner: VariantState, why: string): void {
  const { progress } = prototypeOf(t);
  const s = t.snapshot;
  for (const variant of progress.variants) {
    if (variant === winner || variant.phase === "failed") continue;
    variant.phase = "cancelled";
    t.releaseDevBox(variant.devbox);
  }
  s.branch = winner.devbox.branch;
  s.branchPushed = true;
  s.devbox = winner.devbox;
  t.record("prototype.selected", {
    node: t.active.node,
    variant: winner.index + 1,
    branch: s.branch,
    why,
  });
  recordTable(t, winner);
  completeNode(t, "succeeded");
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
