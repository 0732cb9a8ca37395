import { parseDuration } from "../../workflow/duration.js";
import type { CommandResult } from "../commands.js";
import { addCost } from "../cost.js";
import type { Visit } from "../model.js";
import type { Transition } from "../transition.js";
import { activeNodeOf } from "./active-node.js";
import {
  ensureDevBox,
  finishContainer,
  onCheckpoint,
  recordCommandFinished,
  runDevBoxId,
  setNodeTimeout,
  staleRunCommand,
  stopContainer,
} from "./container.js";
import {
  beginIteration,
  exhaust,
  onLedgerTotal,
  returnUnusedReservation,
  settleIteration,
  type LoopProgress,
} from "./loop-iteration.js";
import type { NodeBehaviour } from "./node-behaviour.js";

/** Starts the loop's next iteration in the run's ready DevBox, carrying earlier attempts' count. */
function start(t: Transition): void {
  const node = activeNodeOf(t, "loop");
  beginIteration(t, node, t.active.iterationsBefore + 1, []);
}

/** An agent turn, gate or checkpoint of the loop ended. */
function onCommandFinished(
  t: Transition,
  devboxId: string,
  result: CommandResult,
): string | undefined {
  const stale = staleRunCommand(t, devboxId, result);
  if (stale !== undefined) return stale;
  const node = activeNodeOf(t, "loop");
  const progress = t.active.progress;
  if (progress.kind !== "loop") throw new Error("programmer error: a loop without loop progress");
  const agentTurn = progress.step === "agent";
  recordCommandFinished(t, result, agentTurn ? node.agent : undefined);
  if (agentTurn) settleIteration(t, progress, result);
  if (!addCost(t, result.costUsd)) return undefined;
  // A turn that could not run as asked (no credentials, a model the budget cannot price) fails
  // the node with that reason: its gates would only say that nothing was done.
  if (agentTurn && result.refused !== undefined) finishContainer(t, "failed", result.refused);
  else if (progress.step === "checkpoint") onCheckpoint(t, result);
  else onLoopCommand(t, progress, result);
  return undefined;
}

/** Runs the iteration's next gate, or ends the iteration and decides whether to go on. */
function onLoopCommand(t: Transition, progress: LoopProgress, result: CommandResult): void {
  const node = activeNodeOf(t, "loop");
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
  const next = gates[progress.gateIndex];
  if (next !== undefined) {
    progress.step = "gate";
    progress.commandId = t.dispatch(runDevBoxId(t), { type: "script", script: next.run });
    return;
  }
  t.record("loop.iteration", {
    node: t.active.node,
    iteration: progress.iteration,
    failedGates: progress.failures.map((failure) => failure.gate),
    costUsd: progress.costUsd ?? 0,
  });
  endIteration(t, progress);
}

/** After an iteration's last gate: done, exhausted by a budget, or on to the next iteration. */
function endIteration(t: Transition, progress: LoopProgress): void {
  const node = activeNodeOf(t, "loop");
  const spent = progress.costUsd ?? 0;
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

/** Why the loop of `visit` cannot go on without a fresh budget, if it cannot. */
function budgetUsedUp(t: Transition, visit: Visit): string | undefined {
  const node = t.node(visit.node);
  if (node.kind !== "loop") return undefined;
  const max = node.budget?.max_iterations ?? 1;
  if ((visit.iterations ?? 0) >= max) {
    return `loop ${visit.node} used ${max === 1 ? "its one iteration" : `all ${max} iterations`}`;
  }
  const wallClock = node.budget?.wall_clock;
  const since = visit.budgetSince ?? visit.startedAt;
  if (wallClock !== undefined && t.at - since >= parseDuration(wallClock)) {
    return `loop ${visit.node} used its ${wallClock} wall clock`;
  }
  // The daily budget is shared by every run and renews each UTC day: the ledger decides.
  if (visit.exhausted === "max_cost_per_iteration_usd") {
    return `loop ${visit.node} ended exhausted: ${visit.reason ?? "an iteration went over its cost"}`;
  }
  return undefined;
}

/**
 * A `loop` node: agent turns in the run's DevBox until every gate passes or a budget
 * (iterations, cost per iteration, daily cost, wall clock) runs out, then a checkpoint.
 */
export const LOOP: NodeBehaviour = {
  routing: "outcome",
  carriesIterations: true,
  enter(t) {
    setNodeTimeout(t, activeNodeOf(t, "loop").timeout);
    ensureDevBox(t, start);
  },
  start,
  onCommandFinished,
  onLedgerTotal,
  // An iteration reserved in the daily ledger but not started gives its reservation back.
  stop: (t, stop, reason) => stopContainer(t, stop, reason, returnUnusedReservation),
  budgetUsedUp,
};
