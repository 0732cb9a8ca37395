import type { CommandResult } from "../commands.js";
import { addCost } from "../cost.js";
import type { VariantState } from "../model.js";
import { agentCommand } from "../prompts.js";
import type { Transition } from "../transition.js";
import { decide, finishWhenSaved, prototypeOf } from "./prototype-race.js";

/** A variant's DevBox is ready (or failed to start): its agent turn starts. */
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
    ...(result.proxiedCostUsd === undefined ? {} : { proxiedCostUsd: result.proxiedCostUsd }),
    ...(result.usage === undefined ? {} : { usage: result.usage }),
    // Every variant's output is kept, the losers' too: why a variant lost is in it.
    output: result.output.slice(-4000),
  });
  if (!addCost(t, result.costUsd)) return;
  if (t.active.pendingOutcome?.stop !== undefined) {
    onStoppedVariantCheckpoint(t, variant, result);
  } else if (variant.phase === "checkpoint") {
    if (result.exitCode !== 0) {
      failVariant(t, variant, "checkpoint failed");
      return;
    }
    variant.phase = "passed";
    if (result.sha !== undefined) variant.sha = result.sha;
    decide(t);
  } else if (variant.phase === "agent" && result.refused !== undefined) {
    // Lost for a reason the gates would not tell (a model the budget cannot price): say it.
    failVariant(t, variant, result.refused);
  } else {
    advanceVariant(t, variant, result);
  }
}

/** After a variant's agent turn or gate: its next gate, its checkpoint, or its failure. */
function advanceVariant(t: Transition, variant: VariantState, result: CommandResult): void {
  const gates = prototypeOf(t).node.gates ?? [];
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
