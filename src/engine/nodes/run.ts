import type { CommandResult } from "../commands.js";
import { addCost } from "../cost.js";
import { feedbackFiles, feedbackPrompt } from "../feedback-log.js";
import { outputFiles, outputsPrompt, parseOutputs } from "../outputs.js";
import { agentCommand } from "../prompts.js";
import type { Transition } from "../transition.js";
import { activeNodeOf, type NodeOf } from "./active-node.js";
import {
  ensureDevBox,
  exitReason,
  finishContainer,
  onCheckpoint,
  recordCommandFinished,
  runDevBoxId,
  setNodeTimeout,
  staleRunCommand,
  stopContainer,
} from "./container.js";
import type { NodeBehaviour } from "./node-behaviour.js";

/** Starts the run node's agent turn or script in the run's ready DevBox. */
function start(t: Transition): void {
  const node = activeNodeOf(t, "run");
  const devboxId = runDevBoxId(t);
  let commandId: string;
  const outputs = t.snapshot.outputs;
  const files = { ...feedbackFiles(t), ...outputFiles(outputs, node.outputs) };
  if (node.run === undefined && node.agent !== undefined) {
    const told = feedbackPrompt(t.active.feedback ?? []);
    const state = outputsPrompt(outputs, node.outputs);
    const prompt = `${node.prompt ?? ""}\n\nThe requirement is in the file named by CLUSTERCODE_BRIEF_FILE.\n${state}${told}`;
    commandId = t.dispatch(devboxId, agentCommand(t.definition, node.agent, prompt), files);
  } else if (node.run !== undefined) {
    commandId = t.dispatch(devboxId, { type: "script", script: node.run }, files);
  } else {
    throw new Error(`programmer error: run node ${t.active.node} has no work`);
  }
  t.active.progress = { kind: "exec", commandId, step: "main" };
}

/** The node's command ended: its exit code is the outcome, checkpointed before routing. */
function onCommandFinished(
  t: Transition,
  devboxId: string,
  result: CommandResult,
): string | undefined {
  const stale = staleRunCommand(t, devboxId, result);
  if (stale !== undefined) return stale;
  const node = activeNodeOf(t, "run");
  const progress = t.active.progress;
  const main = progress.kind === "exec" && progress.step === "main";
  recordCommandFinished(t, result, main && node.run === undefined ? node.agent : undefined);
  if (!addCost(t, result.costUsd)) return undefined;
  if (progress.kind === "exec" && progress.step === "checkpoint") onCheckpoint(t, result);
  else {
    if (result.exitCode !== 0) t.active.failureOutput = result.output.slice(-4000);
    if (result.exitCode === 0 && node.outputs !== undefined) {
      const refused = recordOutputs(t, node.outputs, result.outputFile ?? "");
      if (refused !== undefined) {
        finishContainer(t, "failed", refused);
        return undefined;
      }
    }
    finishContainer(t, result.exitCode === 0 ? "succeeded" : "failed", exitReason(result));
  }
  return undefined;
}

/**
 * Adds what the node wrote to CLUSTERCODE_OUTPUT_FILE to the run's state, recording the state
 * before and after; returns why when a value is undeclared or of the wrong type.
 */
function recordOutputs(
  t: Transition,
  declared: NonNullable<NodeOf<"run">["outputs"]>,
  text: string,
): string | undefined {
  const parsed = parseOutputs(text, declared);
  const s = t.snapshot;
  const before = s.outputs ?? {};
  if (!parsed.ok) {
    t.record("outputs.refused", { node: t.active.node, reason: parsed.reason });
    return `bad outputs: ${parsed.reason}`;
  }
  const after = { ...before, ...parsed.values };
  t.record("outputs.recorded", { node: t.active.node, before, after });
  s.outputs = after;
  return undefined;
}

/** A `run` node: one agent turn or script in the run's DevBox, then a checkpoint. */
export const RUN: NodeBehaviour = {
  routing: "outcome",
  carriesIterations: false,
  enter(t) {
    setNodeTimeout(t, activeNodeOf(t, "run").timeout);
    ensureDevBox(t, start);
  },
  start,
  onCommandFinished,
  stop: (t, stop, reason) => stopContainer(t, stop, reason),
};
