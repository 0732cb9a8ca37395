import { parseDuration } from "../workflow/duration.js";
import type { CommandResult } from "./commands.js";
import { completeNode, finishContainer } from "./flow.js";
import { finishStop, stopNode } from "./stop.js";
import type { LoopBudget, NodeProgress, RunEvent } from "./model.js";
import { agentCommand, feedbackFile, loopPrompt } from "./prompts.js";
import type { Transition } from "./transition.js";
import { utcDay } from "./utc-day.js";
import type { WorkflowNode } from "../workflow/workflow.schema.js";

type LoopProgress = Extract<NodeProgress, { kind: "loop" }>;
type LoopNode = Extract<WorkflowNode, { kind: "loop" }>;
type Failures = LoopProgress["failures"];

/** Adds what a command or judge cost to the visit and the run; false when the run's budget broke. */
export function addCost(t: Transition, usd: number | undefined): boolean {
  if (usd === undefined || usd <= 0) return true;
  const s = t.snapshot;
  s.costUsd += usd;
  const visit = s.active === undefined ? undefined : s.visits[s.active.visit];
  if (visit !== undefined) visit.costUsd += usd;
  const max = t.definition.workflow.budget?.max_cost_usd;
  const spent = s.costUsd - (s.budgetBaseUsd ?? 0);
  if (max === undefined || spent <= max) return true;
  stopNode(t, "budget", `run budget exceeded: spent $${spent.toFixed(2)} of $${max}`);
  return false;
}

/** A command of the active run, loop or deterministic decision ended. */
export function onWorkFinished(t: Transition, result: CommandResult): void {
  const active = t.active;
  const progress = active.progress;
  const node = t.node(active.node);
  const agent = agentTurnOf(t);
  t.record("command.finished", {
    node: active.node,
    attempt: t.visit.attempt,
    command: result.commandId,
    ...(agent === undefined ? {} : { engine: agent.engine, model: agent.model }),
    exitCode: result.exitCode,
    durationMs: result.durationMs,
    ...(result.costUsd === undefined ? {} : { costUsd: result.costUsd }),
    ...(result.usage === undefined ? {} : { usage: result.usage }),
    ...(result.sha === undefined ? {} : { sha: result.sha }),
    output: result.output.slice(-4000),
  });
  if (progress.kind === "loop" && progress.step === "agent") settleIteration(t, progress, result);
  if (!addCost(t, result.costUsd)) return;
  const step = progress.kind === "exec" || progress.kind === "loop" ? progress.step : undefined;
  if (step === "checkpoint") {
    onCheckpoint(t, result);
  } else if (progress.kind === "loop") {
    onLoopCommand(t, progress, result);
  } else if (node.kind === "decision") {
    const label = result.exitCode === 0 ? "pass" : "fail";
    t.record("decision.evaluated", {
      node: active.node,
      evaluator: "deterministic",
      verdict: label,
      exitCode: result.exitCode,
    });
    completeNode(t, label);
  } else {
    finishContainer(t, result.exitCode === 0 ? "succeeded" : "failed", exitReason(result));
  }
}

function onCheckpoint(t: Transition, result: CommandResult): void {
  const pending = t.active.pendingOutcome ?? { outcome: "succeeded" };
  if (pending.stop !== undefined) {
    if (result.exitCode === 0) recordCheckpoint(t, result);
    else t.record("checkpoint.failed", { node: t.active.node, exitCode: result.exitCode });
    finishStop(t, pending.stop, pending.reason ?? pending.outcome);
    return;
  }
  if (result.exitCode !== 0) {
    completeNode(t, "failed", `checkpoint failed (exit ${result.exitCode})`);
    return;
  }
  recordCheckpoint(t, result);
  completeNode(t, pending.outcome, pending.reason);
}

function recordCheckpoint(t: Transition, result: CommandResult): void {
  const s = t.snapshot;
  if (result.sha !== undefined) s.lastSha = result.sha;
  s.branchPushed = true;
  t.record("checkpoint", { node: t.active.node, branch: s.branch, sha: result.sha });
}

function onLoopCommand(t: Transition, progress: LoopProgress, result: CommandResult): void {
  const node = t.node(t.active.node);
  if (node.kind !== "loop") throw new Error("programmer error: loop progress on a non-loop");
  const gates = node.gates ?? [];
  if (progress.step === "gate") {
    const gate = gates[progress.gateIndex];
    if (result.exitCode !== 0 && gate !== undefined) {
      progress.failures.push({ gate: gate.name, output: result.output.slice(-8000) });
    }
    progress.gateIndex++;
  } else {
    progress.gateIndex = 0;
  }
  const devbox = t.snapshot.devbox;
  if (devbox === undefined) throw new Error("programmer error: loop without DevBox");
  const next = gates[progress.gateIndex];
  if (next !== undefined) {
    progress.step = "gate";
    progress.commandId = t.dispatch(devbox.id, { type: "script", script: next.run });
    return;
  }
  const spent = progress.costUsd ?? 0;
  t.record("loop.iteration", {
    node: t.active.node,
    iteration: progress.iteration,
    failedGates: progress.failures.map((failure) => failure.gate),
    costUsd: spent,
  });
  const budget = node.budget;
  const perIteration = budget?.max_cost_per_iteration_usd;
  if (progress.failures.length === 0) {
    finishContainer(t, "succeeded");
  } else if (perIteration !== undefined && spent > perIteration) {
    const reason = `iteration ${progress.iteration} cost $${spent.toFixed(2)}, over max_cost_per_iteration_usd ($${perIteration})`;
    t.record("budget.exhausted", {
      node: t.active.node,
      budget: "max_cost_per_iteration_usd",
      reason,
    });
    exhaust(t, "max_cost_per_iteration_usd", reason);
  } else if (progress.iteration >= (budget?.max_iterations ?? 1)) {
    exhaust(t, "max_iterations", `max_iterations (${budget?.max_iterations ?? 1}) reached`);
  } else if (
    budget?.wall_clock !== undefined &&
    t.at - (t.visit.budgetSince ?? t.visit.startedAt) >= parseDuration(budget.wall_clock)
  ) {
    exhaust(t, "wall_clock", `wall_clock (${budget.wall_clock}) reached`);
  } else {
    beginIteration(t, node, progress.iteration + 1, progress.failures, spent);
  }
}

/**
 * Starts loop iteration `iteration`. With a daily budget it first reserves the iteration's
 * expected cost in the shared daily ledger (`ledger.add`) and waits for the total
 * (`ledger.total`): the reservation makes concurrent runs see each other's iterations in flight.
 */
export function beginIteration(
  t: Transition,
  node: LoopNode,
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
export function onLedgerTotal(
  t: Transition,
  event: Extract<RunEvent, { type: "ledger.total" }>,
): string | undefined {
  const progress = t.snapshot.active?.progress;
  if (
    progress?.kind !== "loop" ||
    progress.step !== "ledger" ||
    progress.commandId !== event.requestId
  )
    return "stale ledger answer";
  const node = t.node(t.active.node);
  const max = node.kind === "loop" ? node.budget?.max_daily_cost_usd : undefined;
  if (node.kind !== "loop" || max === undefined)
    throw new Error("programmer error: no daily budget");
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
function exhaust(t: Transition, budget: LoopBudget, reason: string): void {
  t.visit.exhausted = budget;
  finishContainer(t, "exhausted", reason);
}

function dispatchIteration(
  t: Transition,
  node: LoopNode,
  iteration: number,
  failures: Failures,
  reservedUsd: number,
): void {
  const devbox = t.snapshot.devbox;
  if (devbox === undefined) throw new Error("programmer error: loop without DevBox");
  const command = agentCommand(t.definition, node.agent, loopPrompt(node, iteration, failures));
  const files = failures.length === 0 ? {} : { feedback: feedbackFile(failures) };
  const commandId = t.dispatch(devbox.id, command, files);
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
function settleIteration(t: Transition, progress: LoopProgress, result: CommandResult): void {
  const cost = result.costUsd ?? 0;
  progress.costUsd = (progress.costUsd ?? 0) + cost;
  const node = t.node(t.active.node);
  if (node.kind !== "loop" || node.budget?.max_daily_cost_usd === undefined) return;
  const delta = cost - (progress.reservedUsd ?? 0);
  delete progress.reservedUsd;
  if (delta !== 0) addToLedger(t, delta);
}

function addToLedger(t: Transition, usd: number): void {
  t.emit({ type: "ledger.add", workflow: t.definition.workflow.name, day: utcDay(t.at), usd });
}

/** The engine and model of the active node's agent turn, when the running command is one. */
function agentTurnOf(t: Transition): { engine: string; model?: string | undefined } | undefined {
  const progress = t.active.progress;
  const node = t.node(t.active.node);
  if (progress.kind === "loop" && progress.step === "agent" && node.kind === "loop") {
    return node.agent;
  }
  const main = progress.kind === "exec" && progress.step === "main";
  return main && node.kind === "run" && node.run === undefined ? node.agent : undefined;
}

function exitReason(result: CommandResult): string | undefined {
  if (result.exitCode === 0) return undefined;
  return result.refused ?? `exit code ${result.exitCode}`;
}
