import { z } from "zod";
import type { CheckRunMemo } from "./check-runs.js";
import type { PullRequestRef } from "./pull-requests.js";

/**
 * What the app last wrote to a run's surfaces, so a sync sends only what changed: kept in
 * memory for the most recently synced runs and in the store beside the run, so that a restart
 * compares what it last wrote with what is due and writes only the difference.
 */
export interface RunMemo {
  /** The app's marked comments on the run's issue: marker → comment id. */
  comments?: Map<string, number>;
  /** The app's bot login: only its comments are the run's (never stored). */
  botLogin?: string;
  /** The fingerprint of the status comment's body as last written. */
  statusFingerprint?: string;
  pull?: PullRequestRef;
  /** What the pull request's body was last written for (status, visits, head). */
  pullBody?: string;
  /** Whether the pull request was taken out of draft. */
  ready?: boolean;
  /** The head a succeeded run's pull request was last checked against its base at. */
  mergeChecked?: string;
  checks: CheckRunMemo;
}

/** How a memo is stored (JSON in the run's partition). */
const storedMemoSchema = z.object({
  /** Version of this layout: a memo of another is read as none (the surfaces are looked up). */
  v: z.literal(1),
  /** Marker → comment id. */
  comments: z.array(z.tuple([z.string(), z.number()])).optional(),
  /** Fingerprint of the status comment's body. */
  status: z.string().optional(),
  /** The run's draft pull request. */
  pull: z.object({ number: z.number(), url: z.string(), nodeId: z.string().optional() }).optional(),
  /** What the pull request's body was last written for. */
  pullBody: z.string().optional(),
  /** Whether the pull request was taken out of draft. */
  ready: z.boolean().optional(),
  /** The head the pull request was last checked against its base at. */
  mergeChecked: z.string().optional(),
  /** Check-run key → id, fingerprint of what was sent, URL. */
  checks: z.array(
    z.tuple([z.string(), z.object({ id: z.number(), digest: z.string(), url: z.string() })]),
  ),
  /** Whether the check runs made before the memo existed were looked up. */
  listed: z.boolean(),
});

/** A memo as the store keeps it. */
export type StoredMemo = z.output<typeof storedMemoSchema>;

/** The stored form of `memo`. */
export function encodeMemo(memo: RunMemo): StoredMemo {
  return {
    v: 1,
    ...(memo.comments === undefined ? {} : { comments: [...memo.comments] }),
    ...(memo.statusFingerprint === undefined ? {} : { status: memo.statusFingerprint }),
    ...(memo.pull === undefined ? {} : { pull: memo.pull }),
    ...(memo.pullBody === undefined ? {} : { pullBody: memo.pullBody }),
    ...(memo.ready === undefined ? {} : { ready: memo.ready }),
    ...(memo.mergeChecked === undefined ? {} : { mergeChecked: memo.mergeChecked }),
    checks: [...memo.checks.ids],
    listed: memo.checks.listed,
  };
}

/** A memo read back from the store; a missing or unreadable one is an empty memo. */
export function decodeMemo(stored: unknown): RunMemo {
  const parsed = storedMemoSchema.safeParse(stored);
  if (!parsed.success) return { checks: { ids: new Map(), listed: false } };
  const { comments, status, pull, pullBody, ready, mergeChecked, checks, listed } = parsed.data;
  return {
    ...(comments === undefined ? {} : { comments: new Map(comments) }),
    ...(status === undefined ? {} : { statusFingerprint: status }),
    ...(pull === undefined
      ? {}
      : {
          pull: {
            number: pull.number,
            url: pull.url,
            ...(pull.nodeId === undefined ? {} : { nodeId: pull.nodeId }),
          },
        }),
    ...(pullBody === undefined ? {} : { pullBody }),
    ...(ready === undefined ? {} : { ready }),
    ...(mergeChecked === undefined ? {} : { mergeChecked }),
    checks: { ids: new Map(checks), listed },
  };
}
