import { parseDuration } from "../../workflow/duration.js";
import type { RunEvent } from "../model.js";
import { addFeedback } from "../feedback-log.js";
import type { Transition } from "../transition.js";
import { activeNodeOf } from "./active-node.js";
import type { NodeBehaviour } from "./node-behaviour.js";

/** Default window of an approval. */
const DEFAULT_APPROVAL_TIMEOUT = "72h";

type ApprovalAnswer = Extract<RunEvent, { type: "approval.answer" }>;

/** Releases the run's DevBox (nobody works while a person decides) and waits for an answer. */
function enter(t: Transition): void {
  const node = activeNodeOf(t, "approval");
  const s = t.snapshot;
  const active = t.active;
  t.releaseDevBox(s.devbox);
  delete s.devbox;
  const deadline = t.at + parseDuration(node.timeout ?? DEFAULT_APPROVAL_TIMEOUT);
  const timerId = `approval:${active.visit}`;
  active.progress = { kind: "approval", timerId, deadline };
  s.status = "awaiting_input";
  s.awaiting = { kind: "approval", node: active.node, deadline };
  t.setTimer(timerId, deadline);
  t.record("approval.requested", { node: active.node, deadline, message: node.message });
}

/** The approval's window closed: it takes its `on_timeout` label (`rejected` unless set). */
function onTimer(t: Transition, timerId: string): boolean {
  const progress = t.active.progress;
  if (progress.kind !== "approval" || progress.timerId !== timerId) return false;
  const node = activeNodeOf(t, "approval");
  const label = node.on_timeout ?? "rejected";
  t.record("approval.timed_out", { node: t.active.node, label });
  addFeedback(t, {
    source: "timed_out",
    node: t.active.node,
    label,
    summary: `nobody answered ${t.active.node} in its window`,
  });
  t.completeNode(label);
  return true;
}

/**
 * A person answered the waiting approval: it routes on their decision. Refused when no
 * approval waits, the answer names another node, or the run's starter answers an approval
 * that does not allow self-approval.
 */
export function answerApproval(t: Transition, event: ApprovalAnswer): string | undefined {
  const s = t.snapshot;
  const awaiting = s.awaiting;
  if (awaiting?.kind !== "approval") return "no approval is waiting in this run";
  if (event.node !== undefined && event.node !== awaiting.node) {
    return `the waiting approval is ${awaiting.node}, not ${event.node}`;
  }
  const node = t.node(awaiting.node);
  const self = node.kind === "approval" && node.prevent_self_approval === true;
  if (self && event.actor === t.definition.startedBy) {
    return `${event.actor} started this run and ${awaiting.node} does not allow self-approval`;
  }
  t.record("approval.answered", {
    node: awaiting.node,
    decision: event.decision,
    actor: event.actor,
    ...(event.note === undefined ? {} : { note: event.note }),
    ...(event.where === undefined ? {} : { where: event.where }),
    ...t.judgedShas(event.headSha),
    ...(event.feedback === undefined ? {} : { feedback: event.feedback.length }),
  });
  addFeedback(
    t,
    {
      source: "approval",
      node: awaiting.node,
      label: event.decision,
      summary: `${event.decision} by ${event.actor}`,
      actor: event.actor,
      ...(event.note === undefined ? {} : { detail: event.note }),
      ...(event.where === undefined ? {} : { url: event.where }),
      ...(event.headSha === undefined ? {} : { headSha: event.headSha }),
    },
    ...(event.feedback ?? []),
  );
  if (s.active?.progress.kind === "approval") t.cancelTimer(s.active.progress.timerId);
  t.completeNode(event.decision);
  return undefined;
}

/** An `approval` node: waits for a person's `approved` or `rejected`, or its window to close. */
export const APPROVAL: NodeBehaviour = {
  routing: "label",
  carriesIterations: false,
  enter,
  onCommandFinished: () => "stale command result",
  onTimer,
  stop: (t, stop, reason) => t.finishStop(stop, reason),
};
