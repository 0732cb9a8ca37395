/**
 * What a node entered again is told: one item per decision, approval or event since its
 * previous visit. Feedback is untrusted text (judges, reviewers and CI write it); it reaches
 * commands only as a file and agents only inside their prompt, never a command string.
 */
export interface FeedbackItem {
  /** What produced it. */
  source:
    | "judge"
    | "deterministic"
    | "status"
    | "approval"
    | "review"
    | "check"
    | "conflict"
    | "rework"
    | "retry"
    | "lost"
    | "timed_out"
    | "exhausted"
    | "gate";
  /** The node whose verdict or visit it is, when one is. */
  node?: string;
  /** The label or outcome it routed on (`needs-changes`, `rejected`, `failure`, …). */
  label?: string;
  /** One line: what happened. */
  summary: string;
  /** The body: a judge's reasoning, an output tail, a review with its line comments. */
  detail?: string;
  /** Who said it (`@login`), when a person did. */
  actor?: string;
  /** Where it was said: a comment, review or check run URL. */
  url?: string;
  /** The head commit the verdict or review saw, when known. */
  headSha?: string;
  /** When, in ms since the epoch. */
  at: number;
}
