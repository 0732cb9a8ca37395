import type { CommandResult } from "../commands.js";
import { addCost } from "../cost.js";
import { decisionJudgeRequest } from "../judging.js";
import type { Transition } from "../transition.js";
import { activeNodeOf } from "./active-node.js";
import { ensureDevBox, recordCommandFinished, runDevBoxId, staleRunCommand } from "./container.js";
import type { JudgeEvent, NodeBehaviour } from "./node-behaviour.js";
import { addFeedback, feedbackFiles } from "../feedback-log.js";
import { outputFiles } from "../outputs.js";
import { recordVerdict } from "./verdict.js";

/**
 * Evaluates the decision: a status decision routes on the previous node's outcome at once, an
 * agent decision asks its judge, a deterministic one runs its script in the run's DevBox.
 */
function enter(t: Transition): void {
  const node = activeNodeOf(t, "decision");
  const s = t.snapshot;
  const nodeId = t.active.node;
  if (node.evaluator === "status") {
    const label = s.lastOutcome ?? "default";
    t.record("decision.evaluated", { node: nodeId, evaluator: "status", verdict: label });
    t.completeNode(label);
  } else if (node.evaluator === "agent") {
    const requestId = `j${s.seq}`;
    t.active.progress = { kind: "judge", requestId };
    t.emit(decisionJudgeRequest(t.definition, s, nodeId, requestId));
  } else {
    ensureDevBox(t, start);
  }
}

/** Runs a deterministic decision's script in the run's ready DevBox. */
function start(t: Transition): void {
  const node = activeNodeOf(t, "decision");
  const devboxId = runDevBoxId(t);
  if (node.run === undefined) {
    throw new Error(`programmer error: decision node ${t.active.node} has no work`);
  }
  const commandId = t.dispatch(
    devboxId,
    { type: "script", script: node.run },
    {
      ...feedbackFiles(t),
      ...outputFiles(t.snapshot.outputs, undefined),
    },
  );
  t.active.progress = { kind: "exec", commandId, step: "main" };
}

/** The deterministic decision's script ended: exit 0 is `pass`, anything else `fail`. */
function onCommandFinished(
  t: Transition,
  devboxId: string,
  result: CommandResult,
): string | undefined {
  const stale = staleRunCommand(t, devboxId, result);
  if (stale !== undefined) return stale;
  recordCommandFinished(t, result, undefined);
  if (!addCost(t, result.costUsd)) return undefined;
  const label = result.exitCode === 0 ? "pass" : "fail";
  t.record("decision.evaluated", {
    node: t.active.node,
    evaluator: "deterministic",
    verdict: label,
    exitCode: result.exitCode,
    ...t.judgedShas(),
  });
  const node = activeNodeOf(t, "decision");
  addFeedback(t, {
    source: "deterministic",
    node: t.active.node,
    label,
    summary: `\`${node.run ?? ""}\` exited ${result.exitCode}`,
    detail: result.output,
    ...(t.snapshot.lastSha === undefined ? {} : { headSha: t.snapshot.lastSha }),
  });
  t.completeNode(label);
  return undefined;
}

/**
 * The agent decision's judge answered. It routes on a label among its outgoing edges; a
 * failure or a label outside them takes the `default` edge when there is one, else fails the
 * run with the reason.
 */
function onJudged(t: Transition, event: JudgeEvent): string | undefined {
  const progress = t.active.progress;
  if (progress.kind !== "judge" || progress.requestId !== event.requestId) return "stale verdict";
  if (!recordVerdict(t, event)) return undefined;
  const nodeId = t.active.node;
  addFeedback(t, {
    source: "judge",
    node: nodeId,
    label: event.type === "judge.verdict" ? event.label : "failed",
    summary:
      event.type === "judge.verdict"
        ? `the judge answered ${event.label}`
        : `the judge failed: ${event.reason}`,
    ...(event.type === "judge.verdict" ? { detail: event.reasoning } : {}),
    ...(t.snapshot.lastSha === undefined ? {} : { headSha: t.snapshot.lastSha }),
  });
  const edges = t.definition.workflow.edges.filter((edge) => edge.from === nodeId);
  const allowed = edges
    .map((edge) => edge.label)
    .filter((label) => label !== "exhausted" && label !== "default");
  if (event.type === "judge.verdict" && allowed.includes(event.label)) {
    t.completeNode(event.label);
    return undefined;
  }
  const reason =
    event.type === "judge.failed"
      ? `judge failed: ${event.reason}`
      : `judge answered "${event.label}", which is not one of ${allowed.join(", ")}`;
  if (edges.some((edge) => edge.label === "default")) t.completeNode("default", reason);
  else t.endRun("failed", reason, nodeId);
  return undefined;
}

/** A `decision` node: routes on a status, a judge's label or a script's exit code. */
export const DECISION: NodeBehaviour = {
  routing: "label",
  carriesIterations: false,
  enter,
  start,
  onCommandFinished,
  onJudged,
  stop: (t, stop, reason) => t.finishStop(stop, reason),
};
