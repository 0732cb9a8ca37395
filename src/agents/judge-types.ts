import type { TokenUsage } from "../engine/commands.js";
import type { Effect, EvidenceEntry } from "../engine/model.js";

/** What a judge is asked: pick one of `labels` for `question`. */
export type JudgeRequest = Extract<Effect, { type: "judge.request" }>;

/** What a judge reads besides the question. All of it is untrusted text. */
export interface JudgeContext {
  /** The requirement: the cleaned title and body, or the run's brief. */
  brief: string;
  /** The run branch's diff against its base (a decision), bounded. */
  diff?: string;
  /** Each candidate's diff against its base (prototype judging), bounded. */
  candidates?: { label: string; branch: string; diff: string }[];
  /** The latest evidence entries, oldest first. */
  evidence: EvidenceEntry[];
}

/** A judge's forced choice, with its reasoning kept as evidence. */
export interface Verdict {
  label: string;
  reasoning: string;
  model?: string;
  /** Who answered, when not the provider the node declares: `command` for a judge command. */
  provider?: string;
  /** What the judging cost in US dollars: an estimate from token usage (see prices.ts). */
  costUsd?: number;
  usage?: TokenUsage;
}

/** Decides agent decisions and prototype races. A rejection becomes a `judge.failed` event. */
export interface Judge {
  decide(request: JudgeRequest, context: JudgeContext): Promise<Verdict>;
}
