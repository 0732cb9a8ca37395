import { parseDuration } from "../workflow/duration.js";
import type { CommandResult } from "./commands.js";
import { completeNode, endRun, finishContainer } from "./flow.js";
import type { NodeProgress } from "./model.js";
import { agentCommand, feedbackFile, loopPrompt } from "./prompts.js";
import type { Transition } from "./transition.js";

type LoopProgress = Extract<NodeProgress, { kind: "loop" }>;

/** Adds what a command or judge cost to the visit and the run; false when the run's budget broke. */
export function addCost(t: Transition, usd: number | undefined): boolean {
  if (usd === undefined || usd <= 0) return true;
  const s = t.snapshot;
  s.costUsd += usd;
  const visit = s.active === undefined ? undefined : s.visits[s.active.visit];
  if (visit !== undefined) visit.costUsd += usd;
  const max = t.definition.workflow.budget?.max_cost_usd;
  if (max === undefined || s.costUsd <= max) return true;
  endRun(
    t,
    "failed",
    `run budget exceeded: spent $${s.costUsd.toFixed(2)} of $${max}`,
    s.active?.node,
  );
  return false;
}

/** A command of the active run, loop or deterministic decision ended. */
export function onWorkFinished(t: Transition, result: CommandResult): void {
  const active = t.active;
  const progress = active.progress;
  const node = t.node(active.node);
  t.record("command.finished", {
    node: active.node,
    attempt: t.visit.attempt,
    command: result.commandId,
    exitCode: result.exitCode,
    durationMs: result.durationMs,
    ...(result.costUsd === undefined ? {} : { costUsd: result.costUsd }),
    ...(result.sha === undefined ? {} : { sha: result.sha }),
    output: result.output.slice(-4000),
  });
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
  const s = t.snapshot;
  const pending = t.active.pendingOutcome ?? { outcome: "succeeded" };
  if (result.exitCode !== 0) {
    completeNode(t, "failed", `checkpoint failed (exit ${result.exitCode})`);
    return;
  }
  if (result.sha !== undefined) s.lastSha = result.sha;
  s.branchPushed = true;
  t.record("checkpoint", { node: t.active.node, branch: s.branch, sha: result.sha });
  completeNode(t, pending.outcome, pending.reason);
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
  t.record("loop.iteration", {
    node: t.active.node,
    iteration: progress.iteration,
    failedGates: progress.failures.map((failure) => failure.gate),
  });
  const budget = node.budget;
  if (progress.failures.length === 0) {
    finishContainer(t, "succeeded");
  } else if (progress.iteration >= (budget?.max_iterations ?? 1)) {
    finishContainer(t, "exhausted", `max_iterations (${budget?.max_iterations ?? 1}) reached`);
  } else if (
    budget?.wall_clock !== undefined &&
    t.at - t.visit.startedAt >= parseDuration(budget.wall_clock)
  ) {
    finishContainer(t, "exhausted", `wall_clock (${budget.wall_clock}) reached`);
  } else {
    const failures = progress.failures;
    const iteration = progress.iteration + 1;
    const command = agentCommand(t.definition, node.agent, loopPrompt(node, iteration, failures));
    const commandId = t.dispatch(devbox.id, command, { feedback: feedbackFile(failures) });
    t.active.progress = {
      kind: "loop",
      iteration,
      commandId,
      step: "agent",
      gateIndex: 0,
      failures: [],
    };
  }
}

function exitReason(result: CommandResult): string | undefined {
  return result.exitCode === 0 ? undefined : `exit code ${result.exitCode}`;
}
