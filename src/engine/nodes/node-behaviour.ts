import type { CommandResult } from "../commands.js";
import type { NodeStop, RunEvent, Visit } from "../model.js";
import type { Transition } from "../transition.js";

/** A judge's answer (or failure) as `step` receives it. */
export type JudgeEvent = Extract<RunEvent, { type: "judge.verdict" | "judge.failed" }>;
/** The daily ledger's answer as `step` receives it. */
export type LedgerEvent = Extract<RunEvent, { type: "ledger.total" }>;

/**
 * What one node kind does with the events of its active visit. Every hook works on the active
 * node of `t`; a hook returning a string refuses the event with that reason.
 */
export interface NodeBehaviour {
  /** How the node's outcome picks an edge: by its label, or by success (see flow.ts). */
  routing: "label" | "outcome";
  /** Whether a new attempt carries on the previous attempt's iterations and wall clock. */
  carriesIterations: boolean;
  /** The token arrived: the visit is open and recorded; start the node. */
  enter: (t: Transition) => void;
  /** The run's DevBox the node waited for is ready: start its work. */
  start?: (t: Transition) => void;
  /** A command the node sent ended; `devboxId` is where it ran. */
  onCommandFinished: (t: Transition, devboxId: string, result: CommandResult) => string | undefined;
  /** A DevBox the node claimed itself (not the run's) is ready or failed to start. */
  onOwnDevBoxReady?: (
    t: Transition,
    devboxId: string,
    ok: boolean,
    error?: string,
  ) => string | undefined;
  /** A DevBox the node claimed itself (not the run's) was lost. */
  onOwnDevBoxLost?: (t: Transition, devboxId: string, reason: string) => string | undefined;
  /** A judge the node asked answered. */
  onJudged?: (t: Transition, event: JudgeEvent) => string | undefined;
  /** The daily ledger the node asked answered. */
  onLedgerTotal?: (t: Transition, event: LedgerEvent) => string | undefined;
  /** A timer fired; true when it was the node's own and was handled. */
  onTimer?: (t: Transition, timerId: string) => boolean;
  /** Stop the node before its work ended, checkpointing what it can first. */
  stop: (t: Transition, stop: NodeStop, reason: string) => void;
  /** Release the DevBoxes the node claimed itself, as the run ends or the node times out. */
  releaseOwn?: (t: Transition, why: "run-ended" | "timed-out") => void;
  /** Why retrying the node's `visit` needs a fresh budget, if it does. */
  budgetUsedUp?: (t: Transition, visit: Visit) => string | undefined;
}
