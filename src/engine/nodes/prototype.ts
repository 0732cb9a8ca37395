import type { VariantState } from "../model.js";
import type { Transition } from "../transition.js";
import { activeNodeOf } from "./active-node.js";
import { beginStop, STOP_WORDS } from "./begin-stop.js";
import { setNodeTimeout } from "./container.js";
import type { NodeBehaviour } from "./node-behaviour.js";
import { onPrototypeVerdict } from "./prototype-race.js";
import {
  onVariantCommand,
  onVariantLost,
  onVariantReady,
  stopVariants,
} from "./prototype-variant.js";
import { recordVerdict } from "./verdict.js";

/**
 * The branch of variant `index` in the run's `race`-th prototype race: `<run branch>-v<n>` in
 * the first, `<run branch>-race<k>-v<n>` after. Named from the run's own branch, never from a
 * previous winner's, so a re-entered prototype gets fresh, numbered branches.
 */
export function variantBranch(runBranch: string, race: number, index: number): string {
  return `${runBranch}${race > 1 ? `-race${race}` : ""}-v${index + 1}`;
}

/**
 * Starts the race: the run's DevBox is released and every variant claims its own, each on its
 * own branch.
 */
function enter(t: Transition): void {
  const node = activeNodeOf(t, "prototype");
  const s = t.snapshot;
  setNodeTimeout(t, node.timeout);
  t.releaseDevBox(s.devbox);
  delete s.devbox;
  const nodes = t.definition.workflow.nodes;
  const race = s.visits.filter((visit) => nodes[visit.node]?.kind === "prototype").length;
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

/** The variant running in DevBox `devboxId`. */
function variantOn(t: Transition, devboxId: string): VariantState | undefined {
  const progress = t.active.progress;
  if (progress.kind !== "prototype") return undefined;
  return progress.variants.find((variant) => variant.devbox.id === devboxId);
}

/** Releases the variants' DevBoxes: every one but the run's as the run ends, live ones on timeout. */
function releaseOwn(t: Transition, why: "run-ended" | "timed-out"): void {
  const progress = t.active.progress;
  if (progress.kind !== "prototype") return;
  for (const variant of progress.variants) {
    const release =
      why === "run-ended"
        ? variant.devbox.id !== t.snapshot.devbox?.id
        : variant.phase !== "failed" && variant.phase !== "cancelled";
    if (release) t.releaseDevBox(variant.devbox);
  }
}

/** A `prototype` node: variants race in their own DevBoxes; the first to pass or a judge wins. */
export const PROTOTYPE: NodeBehaviour = {
  routing: "outcome",
  carriesIterations: false,
  enter,
  onCommandFinished(t, devboxId, result) {
    const variant = variantOn(t, devboxId);
    if (variant?.commandId !== result.commandId) return "stale command result";
    onVariantCommand(t, variant, result);
    return undefined;
  },
  onOwnDevBoxReady(t, devboxId, ok, error) {
    const variant = variantOn(t, devboxId);
    if (variant?.phase !== "claim") return "stale DevBox";
    onVariantReady(t, variant, ok, error);
    return undefined;
  },
  onOwnDevBoxLost(t, devboxId, reason) {
    const variant = variantOn(t, devboxId);
    if (variant === undefined) return "stale DevBox";
    if (variant.phase === "passed" || variant.phase === "failed" || variant.phase === "cancelled") {
      return "DevBox already released";
    }
    onVariantLost(t, variant, reason);
    return undefined;
  },
  onJudged(t, event) {
    const progress = t.active.progress;
    if (progress.kind !== "prototype" || progress.judgeRequest !== event.requestId) {
      return "stale verdict";
    }
    if (!recordVerdict(t, event)) return undefined;
    const verdict = event.type === "judge.verdict" ? event : undefined;
    onPrototypeVerdict(t, verdict?.label, verdict?.reasoning ?? "");
    return undefined;
  },
  stop(t, stop, reason) {
    if (stopVariants(t, STOP_WORDS[stop])) beginStop(t, stop, reason);
    else t.finishStop(stop, reason);
  },
  releaseOwn,
};
