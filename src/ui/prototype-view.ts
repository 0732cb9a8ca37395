import type { VariantState } from "../engine/model.js";
import type { EvidenceRecord } from "../store/store.js";
import type { WorkflowNode } from "../workflow/workflow.schema.js";
import { addTokens, entryOf, numberOf, textOf, tokensOf } from "./evidence-lines.js";
import type { GateView, PrototypeView, VariantView } from "./view/run-view.js";

type PrototypeNode = Extract<WorkflowNode, { kind: "prototype" }>;

/**
 * A prototype visit's variants side by side, read from its evidence: each variant's branch
 * (from the DevBox its commands ran in), gates with exit codes, cost, tokens and result (the
 * final table once the race is decided), and the judge's verdict with its reasoning.
 */
export function buildPrototypeView(
  node: PrototypeNode,
  records: readonly EvidenceRecord[],
  /** The race's live state, while the visit is active. */
  live?: readonly VariantState[],
): PrototypeView {
  const variants: VariantView[] = node.variants.map((spec, index) => ({
    variant: index + 1,
    engine: spec.engine,
    ...(spec.model === undefined ? {} : { model: spec.model }),
    gates: [],
    result: "racing",
    costUsd: 0,
    durationMs: 0,
  }));
  const branchOfDevBox = new Map<string, string>();
  const devboxOfCommand = new Map<string, string>();
  const view: PrototypeView = { brief: node.brief, select: node.select ?? "first", variants };
  for (const record of records) {
    const entry = entryOf(record);
    const devbox = textOf(entry.devbox);
    const command = textOf(entry.command);
    const variant = variants[(numberOf(entry.variant) ?? 0) - 1];
    if (entry.kind === "devbox.claimed" && devbox !== undefined) {
      branchOfDevBox.set(devbox, textOf(entry.branch) ?? "");
    } else if (
      entry.kind === "command.dispatched" &&
      devbox !== undefined &&
      command !== undefined
    ) {
      devboxOfCommand.set(command, devbox);
    } else if (entry.kind === "command.finished" && variant !== undefined) {
      const branch = branchOfDevBox.get(devboxOfCommand.get(command ?? "") ?? "");
      if (branch !== undefined && branch !== "") variant.branch = branch;
      variant.costUsd += numberOf(entry.costUsd) ?? 0;
      variant.durationMs += numberOf(entry.durationMs) ?? 0;
      const tokens = addTokens(variant.tokens, tokensOf(entry.usage));
      if (tokens !== undefined) variant.tokens = tokens;
    } else if (entry.kind === "variant.failed" && variant !== undefined) {
      variant.result = "failed";
      variant.failure = textOf(entry.reason) ?? "";
    } else if (entry.kind === "decision.evaluated") {
      view.judge = judgeOf(entry);
    } else if (entry.kind === "prototype.selected") {
      recordSelection(view, entry);
    } else if (entry.kind === "prototype.variants" && Array.isArray(entry.variants)) {
      applyFinalTable(variants, entry.variants as Record<string, unknown>[]);
    }
  }
  applyLiveState(variants, live ?? []);
  return view;
}

/**
 * Records the race's winner, why it won, and the variant branch it won on (`variantBranch`; runs
 * recorded before the winner was moved onto the run branch said it in `branch`).
 */
function recordSelection(view: PrototypeView, entry: Record<string, unknown>): void {
  const winner = numberOf(entry.variant);
  if (winner !== undefined) view.winner = winner;
  const why = textOf(entry.why);
  if (why !== undefined) view.why = why;
  const won = view.variants[(winner ?? 0) - 1];
  const branch = textOf(entry.variantBranch) ?? textOf(entry.branch);
  if (won !== undefined && branch !== undefined) won.branch = branch;
}

/** Overwrites each variant's result, cost, duration and gates with the decided race's table. */
function applyFinalTable(variants: VariantView[], rows: readonly Record<string, unknown>[]): void {
  for (const row of rows) {
    const target = variants[(numberOf(row.variant) ?? 0) - 1];
    if (target === undefined) continue;
    target.result = textOf(row.verdict) ?? target.result;
    target.costUsd = numberOf(row.costUsd) ?? target.costUsd;
    target.durationMs = numberOf(row.durationMs) ?? target.durationMs;
    target.gates = gatesOf(row.gates);
  }
}

/** Shows the live race state of an active visit over what the evidence says so far. */
function applyLiveState(variants: VariantView[], live: readonly VariantState[]): void {
  for (const state of live) {
    const target = variants[state.index];
    if (target === undefined) continue;
    if (target.result === "racing") target.result = state.phase;
    target.branch ??= state.devbox.branch;
    target.costUsd = state.costUsd;
    target.durationMs = state.durationMs;
    target.gates = gatesOf(state.gates);
  }
}

function gatesOf(value: unknown): GateView[] {
  if (!Array.isArray(value)) return [];
  return (value as Record<string, unknown>[]).map((gate) => ({
    name: textOf(gate.name) ?? "gate",
    exitCode: numberOf(gate.exitCode) ?? -1,
  }));
}

function judgeOf(entry: Record<string, unknown>): NonNullable<PrototypeView["judge"]> {
  const judge: NonNullable<PrototypeView["judge"]> = {};
  for (const field of ["model", "verdict", "reasoning", "error"] as const) {
    const value = textOf(entry[field]);
    if (value !== undefined) judge[field] = value;
  }
  return judge;
}
