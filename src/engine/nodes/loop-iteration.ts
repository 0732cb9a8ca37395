import type { CommandResult } from "../commands.js";
import type { LoopBudget, NodeProgress } from "../model.js";
import { feedbackPrompt, feedbackText } from "../feedback-log.js";
import { outputFiles } from "../outputs.js";
import { agentCommand, feedbackFile, loopPrompt } from "../prompts.js";
import type { Transition } from "../transition.js";
import { utcDay } from "../utc-day.js";
import { activeNodeOf, type NodeOf } from "./active-node.js";
import { finishContainer, runDevBoxId } from "./container.js";
import type { LedgerEvent } from "./node-behaviour.js";

/** The progress of a loop node. */
export type LoopProgress = Extract<NodeProgress, { kind: "loop" }>;
type Failures = LoopProgress["failures"];

/**
 * Starts loop iteration `iteration`. With a daily budget it first reserves the iteration's
 * expected cost in the shared daily ledger (`ledger.add`) and waits for the total
 * (`ledger.total`): the reservation makes concurrent runs see each other's iterations in flight.
 */
export function beginIteration(
  t: Transition,
  node: NodeOf<"loop">,
  iteration: number,
  failures: Failures,
  previousCostUsd = 0,
): void {
  if (node.budget?.max_daily_cost_usd === undefined) {
    dispatchIteration(t, node, iteration, failures, 0);
    return;
  }
  const reservedUsd = node.budget.max_cost_per_iteration_usd ?? previousCostUsd;
  const requestId = `l${t.snapshot.seq}`;
  t.emit({
    type: "ledger.add",
    requestId,
    workflow: t.definition.workflow.name,
    day: utcDay(t.at),
    usd: reservedUsd,
  });
  t.active.progress = {
    kind: "loop",
    iteration,
    commandId: requestId,
    step: "ledger",
    gateIndex: 0,
    failures,
    reservedUsd,
  };
}

/** The daily ledger answered: start the iteration, or end the loop when today's budget is spent. */
export function onLedgerTotal(t: Transition, event: LedgerEvent): string | undefined {
  const progress = t.snapshot.active?.progress;
  if (
    progress?.kind !== "loop" ||
    progress.step !== "ledger" ||
    progress.commandId !== event.requestId
  )
    return "stale ledger answer";
  const node = activeNodeOf(t, "loop");
  const max = node.budget?.max_daily_cost_usd;
  if (max === undefined) throw new Error("programmer error: no daily budget");
  const reserved = progress.reservedUsd ?? 0;
  const before = event.totalUsd - reserved;
  t.record("ledger.checked", {
    node: t.active.node,
    iteration: progress.iteration,
    spentTodayUsd: before,
    reservedUsd: reserved,
    maxDailyCostUsd: max,
  });
  if (before < max) {
    dispatchIteration(t, node, progress.iteration, progress.failures, reserved);
    return undefined;
  }
  if (reserved !== 0) addToLedger(t, -reserved);
  progress.reservedUsd = 0;
  const reason = `max_daily_cost_usd ($${max}) reached: $${before.toFixed(2)} spent today by ${t.definition.workflow.name}`;
  t.record("budget.exhausted", { node: t.active.node, budget: "max_daily_cost_usd", reason });
  // Nothing ran in this iteration: the loop ends with what the previous one left.
  progress.iteration--;
  exhaust(t, "max_daily_cost_usd", reason);
  return undefined;
}

/** Ends the active loop `exhausted`, remembering which budget ran out (a retry asks). */
export function exhaust(t: Transition, budget: LoopBudget, reason: string): void {
  t.visit.exhausted = budget;
  finishContainer(t, "exhausted", reason);
}

function dispatchIteration(
  t: Transition,
  node: NodeOf<"loop">,
  iteration: number,
  failures: Failures,
  reservedUsd: number,
): void {
  const devboxId = runDevBoxId(t);
  const told = t.active.feedback ?? [];
  const prompt = loopPrompt(node, iteration, failures) + feedbackPrompt(told);
  const command = agentCommand(t.definition, node.agent, prompt);
  const reentry = told.length === 0 ? [] : [feedbackText(told)];
  const gates = failures.length === 0 ? [] : [feedbackFile(failures)];
  const text = [...reentry, ...gates].join("\n");
  const files = {
    ...(text === "" ? {} : { feedback: text }),
    ...outputFiles(t.snapshot.outputs, undefined),
  };
  const commandId = t.dispatch(devboxId, command, files);
  t.visit.iterations = iteration;
  t.active.progress = {
    kind: "loop",
    iteration,
    commandId,
    step: "agent",
    gateIndex: 0,
    failures: [],
    costUsd: 0,
    ...(reservedUsd === 0 ? {} : { reservedUsd }),
  };
}

/** The iteration's agent turn ended: its cost replaces the reservation in the daily ledger. */
export function settleIteration(
  t: Transition,
  progress: LoopProgress,
  result: CommandResult,
): void {
  const cost = result.costUsd ?? 0;
  progress.costUsd = (progress.costUsd ?? 0) + cost;
  const node = activeNodeOf(t, "loop");
  if (node.budget?.max_daily_cost_usd === undefined) return;
  const delta = cost - (progress.reservedUsd ?? 0);
  delete progress.reservedUsd;
  if (delta !== 0) addToLedger(t, delta);
}

/**
 * A loop waiting on the daily ledger has reserved an iteration that will not run: the
 * reservation goes back. An interrupted agent turn keeps its reservation, as it may have spent.
 */
export function returnUnusedReservation(t: Transition, progress: NodeProgress): void {
  if (progress.kind !== "loop" || progress.step !== "ledger") return;
  const reserved = progress.reservedUsd ?? 0;
  progress.reservedUsd = 0;
  if (reserved === 0) return;
  addToLedger(t, -reserved);
}

function addToLedger(t: Transition, usd: number): void {
  t.emit({ type: "ledger.add", workflow: t.definition.workflow.name, day: utcDay(t.at), usd });
}
