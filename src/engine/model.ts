import type { Workflow } from "../workflow/workflow.schema.js";
import type {
  CommandRequest,
  CommandResult,
  DevBoxSpec,
  EngineCredentials,
  TokenUsage,
  UsagePaths,
} from "./commands.js";
import type { FeedbackItem } from "./feedback.js";

/**
 * What cleaning an issue's text removed (`cleanIssueText` in src/agents/clean-text.ts), by kind;
 * all zero when the text was clean.
 */
export interface RemovedText {
  /**
   * Comments GitHub does not show: `<!-- … -->` (an unterminated one runs to the end of the
   * text) and Markdown comment lines, `[//]: # (…)` and `[comment]: <> (…)`.
   */
  htmlComments: number;
  /**
   * Zero-width and other invisible formatting characters (ZWSP, ZWNJ, ZWJ, word joiner, BOM,
   * soft hyphen, variation selectors, interlinear annotation marks…).
   */
  zeroWidth: number;
  /** Bidirectional controls (LRE…RLO, LRI…PDI, LRM, RLM, ALM): they reorder what a reader sees. */
  bidiControls: number;
  /** Unicode tag characters (U+E0000–U+E007F): invisible ASCII look-alikes. */
  tagCharacters: number;
}

/** A run as the runtime works on it: the pinned definition and the state. */
export interface RunDocument {
  definition: RunDefinition;
  state: RunSnapshot;
}

/** Where a run is in its life. */
export type RunStatus =
  "queued" | "running" | "awaiting_input" | "succeeded" | "failed" | "cancelled" | "escalated";

/** Statuses a run never leaves (except `failed`, through a retry). */
export const FINAL_STATUSES: readonly RunStatus[] = [
  "succeeded",
  "failed",
  "cancelled",
  "escalated",
];

/** Is `status` final? */
export function isFinal(status: RunStatus): boolean {
  return FINAL_STATUSES.includes(status);
}

/** What does not change during a run: the pinned workflow and where the run works. */
export interface RunDefinition {
  runId: string;
  workflow: Workflow;
  /** The branch the run branch starts from. */
  baseBranch: string;
  /** The run branch: `clustercode/<issue>-<run>` on GitHub. */
  branch: string;
  /** The requirement: the cleaned title and body, or `--brief`. Untrusted text. */
  brief: string;
  /** Who started the run. */
  startedBy?: string;
  /** What started the run: the webhook delivery id, or a schedule's firing. */
  trigger?: string;
  /** The workflow file the run pinned: its path and git blob SHA on the default branch. */
  source?: { path: string; sha: string };
  /**
   * What cleaning the brief removed (see `cleanIssueText` in src/agents/clean-text.ts): HTML
   * comments and invisible characters, by kind. The run's first evidence records it.
   */
  briefCleaned?: Readonly<RemovedText>;
  /** Agent CLIs by engine name: argv templates with `{prompt_file}` and `{model}`. */
  engines: Readonly<Record<string, EngineCommand>>;
}

/** An agent CLI as the engine runs it. */
export interface EngineCommand {
  /** argv template with `{prompt_file}` and `{model}`; run without a shell. */
  command: string[];
  /** Dotted path to the cost in US dollars in the JSON the CLI prints last. */
  costJsonPath?: string;
  /** Dotted path to the token usage object in the JSON the CLI prints last. */
  usageJsonPath?: string;
  /** Dotted paths to each token count in the JSON the CLI prints last. */
  usagePaths?: UsagePaths;
  /** Price the reported usage from the model price table when the CLI reports no cost. */
  priceFromUsage?: boolean;
  /** The environment variables (or login files) one of which the CLI needs to authenticate. */
  credentials?: EngineCredentials;
}

/** One visit of the token to a node, in order. */
export interface Visit {
  node: string;
  attempt: number;
  startedAt: number;
  endedAt?: number;
  /** succeeded, failed, timed_out, exhausted, lost, or a decision's or approval's label. */
  outcome?: string;
  /** The edge label the run routed on. */
  label?: string;
  reason?: string;
  costUsd: number;
  /** A loop's iterations through this attempt, counting those of the attempts it carries on. */
  iterations?: number;
  /**
   * When a loop attempt that carries on earlier attempts' budget started that budget: its
   * wall clock counts from here, not from this attempt's start.
   */
  budgetSince?: number;
  /** The loop budget an `exhausted` outcome used up. */
  exhausted?: LoopBudget;
  /** Where the run's feedback log stood when this visit began: what came later is news to it. */
  feedbackMark?: number;
  /** One line per feedback item this visit was told (why it was entered again). */
  fedBack?: string[];
}

/** The loop budgets that can end a loop `exhausted`. */
export type LoopBudget =
  "max_iterations" | "max_cost_per_iteration_usd" | "max_daily_cost_usd" | "wall_clock";

/** A DevBox the run holds. */
export interface HeldDevBox {
  id: string;
  branch: string;
  ready: boolean;
  /** What each agent CLI in the DevBox answered to `--version` (its first line), by argv[0]. */
  harness?: Record<string, string>;
  /** How the DevBox is isolated ("bubblewrap", "none (CLUSTERCODE_UNSAFE_LOCAL_DEVBOX=1)"). */
  isolation?: string;
  /** The commit it must start on (the run's last checkpoint), when the run has one. */
  sha?: string;
  /** Claims before this one refused for starting on another commit (see devbox-sha.ts). */
  staleStarts?: number;
}

/** One contender of a prototype race. */
export interface VariantState {
  index: number;
  devbox: HeldDevBox;
  phase: "claim" | "agent" | "gates" | "checkpoint" | "passed" | "failed" | "cancelled";
  gateIndex: number;
  gateFailures: number;
  commandId?: string;
  lostOnce: boolean;
  costUsd: number;
  durationMs: number;
  /** Each gate the variant ran, with its exit code. */
  gates?: { name: string; exitCode: number }[];
  /** The commit its checkpoint made: the run's head when it wins. */
  sha?: string;
}

/** The work in progress on the active node. */
export type NodeProgress =
  | { kind: "claim" }
  | { kind: "exec"; commandId: string; step: "main" | "checkpoint" | "setup" }
  | {
      kind: "loop";
      iteration: number;
      commandId: string;
      /** `ledger`: waiting for the daily ledger's answer before the iteration's agent turn. */
      step: "ledger" | "agent" | "gate" | "checkpoint";
      gateIndex: number;
      /** What this iteration's agent turns cost so far. */
      costUsd?: number;
      /** The daily ledger reservation this iteration holds, until its agent turn settles it. */
      reservedUsd?: number;
      /** Outputs of this iteration's failed gates, fed to the next iteration. */
      failures: { gate: string; output: string }[];
      outcome?: string;
    }
  | { kind: "prototype"; variants: VariantState[]; judgeRequest?: string }
  | { kind: "judge"; requestId: string }
  | { kind: "approval"; timerId: string; deadline: number };

/** The active node and what it is doing. */
export interface ActiveNode {
  node: string;
  /** Index into `visits`. */
  visit: number;
  progress: NodeProgress;
  /** The outcome decided before the checkpoint that ends the node. */
  pendingOutcome?: { outcome: string; reason?: string; stop?: NodeStop };
  /** A node-timeout timer, when the node has a `timeout`. */
  timeoutTimer?: string;
  /** Whether an idempotent re-run after a lost DevBox was used. */
  lostRerun: boolean;
  /** Loop iterations used by earlier attempts of this visit: the budget carries over. */
  iterationsBefore: number;
  /** The output tail of the node's failed command: what its failure feeds back. */
  failureOutput?: string;
  /** Why the node was entered again: handed to its commands and agents (see feedback.ts). */
  feedback?: FeedbackItem[];
}

/**
 * Why a container node was stopped before its work ended: its `timeout`, the run's budget or
 * the run's wall clock. A stopped node still checkpoints before its DevBox is released.
 */
export type NodeStop = "timeout" | "budget" | "wall-clock";

/** What a run in `awaiting_input` waits for. */
export type Awaiting =
  | { kind: "approval"; node: string; deadline: number }
  | { kind: "lost"; node: string; commandId?: string };

/** The whole state of a run: what `step` reads and returns. */
export interface RunSnapshot {
  runId: string;
  status: RunStatus;
  reason?: string;
  startedAt: number;
  updatedAt: number;
  /**
   * The run branch: always the definition's (a prototype's winner is moved onto it). Runs
   * stored before that kept their winner's variant branch here.
   */
  branch: string;
  /** Whether the run branch exists in the source repository (a checkpoint pushed it). */
  branchPushed: boolean;
  lastSha?: string;
  /** The base branch's commit the run's first DevBox started from: what verdicts judge against. */
  baseSha?: string;
  visits: Visit[];
  /** Crossings per edge, by the edge's index; never reset within a run. */
  traversals: Record<string, number>;
  costUsd: number;
  /** When the run's wall clock runs out; kept across retries (a `--reset-budget` retry moves it). */
  deadline?: number;
  /** The part of `costUsd` the hub's provider proxy counted (see `CommandResult.proxiedCostUsd`). */
  proxiedUsd?: number;
  /** Spend a `--reset-budget` retry set aside: `budget.max_cost_usd` counts what came after. */
  budgetBaseUsd?: number;
  devbox?: HeldDevBox;
  active?: ActiveNode;
  awaiting?: Awaiting;
  /** The node a failed run stopped at, which `retry` re-enters. */
  failedNode?: string;
  /** The outcome of the node that handed over, which a status decision routes on. */
  lastOutcome?: string;
  /** The engine (and model) of the last agent turn: the author of what a judge reads next. */
  lastAuthor?: { engine: string; model?: string };
  /** Pending timers by id, with their due time. */
  timers: Record<string, number>;
  /**
   * Every verdict, answer and event that may tell a node entered again why (bounded, see
   * feedback.ts); each visit marks where it stood when the visit began.
   */
  feedbackLog?: FeedbackItem[];
  /** The run's typed state: every node output so far, by name (see outputs.ts). */
  outputs?: Record<string, unknown>;
  /** Rework rounds used: each `run.rework` that re-opened the succeeded run. */
  reworkRounds?: number;
  /** The next effect sequence number. */
  seq: number;
  /** The next evidence sequence number. */
  evidenceSeq: number;
}

/** Something that happened to a run: the input of `step`. Time always comes in as data. */
export type RunEvent = { at: number } & (
  | { type: "run.start" }
  | {
      type: "devbox.ready";
      devboxId: string;
      ok: boolean;
      error?: string;
      sha?: string;
      harness?: Record<string, string>;
      isolation?: string;
    }
  | { type: "devbox.lost"; devboxId: string; reason: string; runningCommandId?: string }
  /** The runtime refused a ref update a DevBox pushed; recorded as evidence, nothing else. */
  | { type: "push.refused"; devboxId: string; ref: string; reason: string }
  | { type: "command.finished"; devboxId: string; result: CommandResult }
  | { type: "timer.fired"; timerId: string }
  | {
      type: "judge.verdict";
      requestId: string;
      label: string;
      reasoning: string;
      model?: string;
      /** Who answered when it is not the node's declared provider (a judge command). */
      provider?: string;
      costUsd?: number;
      usage?: TokenUsage;
    }
  | {
      type: "judge.failed";
      requestId: string;
      reason: string;
      /** What the failed attempts cost, when the judge got that far. */
      model?: string;
      costUsd?: number;
      usage?: TokenUsage;
    }
  | { type: "ledger.total"; requestId: string; totalUsd: number }
  | {
      type: "approval.answer";
      decision: "approved" | "rejected";
      actor: string;
      node?: string;
      note?: string;
      where?: string;
      /** A review's body and line comments, handed to the node the answer sends the run to. */
      feedback?: FeedbackItem[];
      /** The head commit the answer (a review) looked at. */
      headSha?: string;
    }
  | { type: "run.cancel"; actor: string; reason?: string; where?: string }
  | {
      type: "run.retry";
      actor: string;
      where?: string;
      /** Give the retried node (and the run) fresh budgets: needed when one was used up. */
      resetBudget?: boolean;
      /** The graph version of the workflow file as it is now, when the caller read it. */
      workflowVersion?: string;
    }
  /**
   * The runtime could not record the run's next state (the store refused it, e.g. over its
   * item size): the run ends `failed` with `reason` instead of staying `running` forever.
   */
  | { type: "run.abort"; reason: string }
  /**
   * The succeeded run's work was sent back (a review asking for changes, a comment, a failing
   * check, a merge conflict): the workflow's `rework:` re-opens it at `rework.node` with the
   * feedback. Refused (recorded as `rework.refused` evidence) when it cannot.
   */
  | {
      type: "run.rework";
      source: "review" | "comment" | "check" | "conflict";
      actor?: string;
      where?: string;
      headSha?: string;
      feedback: FeedbackItem[];
    }
  /**
   * Something that happened to the run's work after the fact, on GitHub: its pull request closed
   * (merged or not), or another check failing on its branch. Recorded as evidence even after the
   * run ended, changing nothing else: the judge scorecard reads it.
   */
  | {
      type: "run.observed";
      /** `branch.moved`: the run branch's head on GitHub is no longer the run's checkpoint. */
      what: "pull_request.closed" | "ci.failed" | "branch.moved";
      merged?: boolean;
      sha?: string;
      check?: string;
      where?: string;
    }
  | {
      type: "run.resolve";
      outcome: "succeeded" | "failed";
      actor: string;
      note?: string;
      where?: string;
    }
);

/** An evidence entry: what ran, why it routed, what changed, what it cost, who accepted. */
export interface EvidenceEntry {
  at: number;
  kind: string;
  node?: string;
  attempt?: number;
  [detail: string]: unknown;
}

/** Something the runtime must do. `seq` is unique per run: the idempotency key is `runId/seq`. */
export type Effect = { seq: number } & (
  | {
      type: "devbox.claim";
      devboxId: string;
      spec: DevBoxSpec;
      /**
       * With a cost budget: what is left of it and the proxied spend counted, so that the hub's
       * provider proxy holds the DevBox to the budget from its first request (setup, `run:`).
       */
      spend?: { roomUsd: number; countedUsd: number };
    }
  | { type: "devbox.release"; devboxId: string }
  | { type: "command.dispatch"; devboxId: string; request: CommandRequest }
  /** Stop the command running in a DevBox (its result no longer matters); the DevBox stays. */
  | { type: "command.interrupt"; devboxId: string; commandId: string }
  | { type: "timer.set"; timerId: string; dueAt: number }
  | { type: "timer.cancel"; timerId: string }
  /**
   * Point the run branch `branch` at a prototype race's winner: commit `sha` (unset: the head)
   * of its variant branch `from`, which stays as evidence of the race. Performed again after a
   * crash, it leaves a run branch already at or past `sha` alone.
   */
  | { type: "branch.move"; branch: string; from: string; sha?: string }
  | {
      type: "judge.request";
      requestId: string;
      node: string;
      question: string;
      labels: string[];
      judge: { provider: string; model: string };
      /** Branches to judge between (prototype judging), when any. */
      candidates?: { label: string; branch: string }[];
      /** The run branch and its base: the judge reads the diff between them. */
      branch?: string;
      baseBranch?: string;
    }
  | {
      type: "ledger.add";
      /** The id the answer (`ledger.total`) carries; absent when no answer is wanted. */
      requestId?: string;
      /** The workflow whose daily ledger this is; the runtime adds the repository. */
      workflow: string;
      /** The UTC day, YYYY-MM-DD, of the event that caused the add. */
      day: string;
      /** May be 0 (a check) or negative (a reservation returned). */
      usd: number;
    }
  | { type: "evidence"; evidenceSeq: number; entry: EvidenceEntry }
);

/** What `step` returns. `refused` says why an event was not accepted (for a reply). */
export interface StepResult {
  snapshot: RunSnapshot;
  effects: Effect[];
  refused?: string;
}
