import type { CommandResult } from "../commands.js";
import { addCost } from "../cost.js";
import { feedbackFiles, feedbackPrompt } from "../feedback-log.js";
import { agentCommand } from "../prompts.js";
import type { Transition } from "../transition.js";
import { activeNodeOf } from "./active-node.js";
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
  const files = feedbackFiles(t);
  if (node.run === undefined && node.agent !== undefined) {
    const told = feedbackPrompt(t.active.feedback ?? []);
    const prompt = `${node.prompt ?? ""}\n\nThe requirement is in the file named by CLUSTERCODE_BRIEF_FILE.\n${told}`;
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
    finishContainer(t, result.exitCode === 0 ? "succeeded" : "failed", exitReason(result));
  }
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
