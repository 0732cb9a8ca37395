import type { EvidenceEntry } from "../../engine/model.js";
import { LruMap } from "../../memory/lru-map.js";
import type { Store } from "../../store/store.js";
import type { Admission } from "../../runtime/admission.js";
import { supersedeOldRunChecks, upsertCheckRun } from "./check-runs.js";
import { createMarkedComment, findMarkedComments, updateComment } from "./comments.js";
import { splitFullName, type GitHub, type RepoRef } from "../client/github.js";
import type { Installations } from "../client/installations.js";
import {
  diffstatOf,
  editPullBody,
  ensurePullRequest,
  markReadyForReview,
  requestReviews,
} from "./pull-requests.js";
import { renderPullBody } from "./render-pull.js";
import { renderCheckRuns } from "./render-checks.js";
import { renderStatusComment, statusMarker } from "./render-status.js";
import { parseRunBranch } from "../../runtime/issue-runs.js";
import { fingerprint } from "./fingerprint.js";
import { decodeMemo, encodeMemo, type RunMemo } from "./surface-memo.js";
import { RunRepository, type LoadedRun, type RunDocument } from "../../store/run-repository.js";

/** When a succeeded run's pull request leaves draft: `on-success` (default) or `never`. */
export type PullReady = "never" | "on-success";

/** The states a run's pull request body is written for: waiting for a person, or ended. */
const SETTLED = new Set(["awaiting_input", "succeeded", "failed", "cancelled", "escalated"]);

/** How many runs' memos a process keeps in memory (the store keeps them all). */
const MAX_MEMOS = 1000;

/** What a {@link SurfaceWriter} writes with. */
export interface SurfaceWriterDeps {
  store: Store;
  installations: Installations;
  admission: Admission;
  onError: (error: unknown, runId: string) => void;
  /** What the DevBox executor last said about a run's DevBox, if anything. */
  devboxNotice?: (runId: string) => string | undefined;
  /** The run page of a run (repository owner/name, run id), when the app serves them. */
  runPageUrl?: (repo: string, runId: string) => string;
  /** Checks a succeeded run's pull request against its base (once per head commit). */
  onSucceeded?: (pull: {
    gh: GitHub;
    repo: RepoRef;
    runId: string;
    pull: number;
    sha: string;
  }) => Promise<void>;
  /** Whether a succeeded run's pull request leaves draft (default `on-success`). */
  pullReady?: PullReady;
}

/**
 * Writes a run's GitHub surfaces from its stored state: the status comment (found by its hidden
 * marker, edited in place), the draft PR once the branch has commits, check runs (found by
 * external id), and for a waiting approval, review requests and one comment mentioning the
 * approvers. What it wrote is remembered with the run (see RunMemo), so a write after a
 * restart writes only what changed. Callers keep one run's writes from overlapping.
 */
export class SurfaceWriter {
  readonly #memos = new LruMap<string, RunMemo>(MAX_MEMOS);
  readonly #runs: RunRepository;

  constructor(private readonly deps: SurfaceWriterDeps) {
    this.#runs = new RunRepository(deps.store);
  }

  /** Brings every surface of `runId` up to date from the store (nothing when it has no run). */
  async write(runId: string): Promise<void> {
    const run = await this.#runs.get(runId);
    if (run !== undefined) await this.#syncStored(runId, run);
  }

  /**
   * Forgets what was written for `runId`: the next write finds its surfaces afresh by key, as
   * after a write that failed and may have landed.
   */
  forget(runId: string): void {
    this.#memos.set(runId, decodeMemo(undefined));
  }

  /** Drops the memo held in memory: the next write starts from the one in the store. */
  drop(runId: string): void {
    this.#memos.delete(runId);
  }

  async #syncStored(runId: string, run: LoadedRun): Promise<void> {
    const { stored, document } = run;
    const { definition } = document;
    const parsed = parseRunBranch(definition.branch);
    if (parsed === undefined) return;
    const repo: RepoRef = { ...splitFullName(stored.repo), defaultBranch: definition.baseBranch };
    const gh = await this.deps.installations.client(stored.repo);
    // The most recently synced runs keep their memos in memory; the others (and every run after
    // a restart) read theirs from the store.
    const memo = this.#memos.get(runId) ?? decodeMemo(await this.deps.store.getSurfaceMemo(runId));
    this.#memos.set(runId, memo);
    const before = JSON.stringify(encodeMemo(memo));
    try {
      await this.#writeAll(runId, run, gh, repo, memo, parsed.issue);
      // The pull request's description comes last: when it cannot be written (a permission the
      // installation lacks, an outage), the run's check runs and status comment already are.
      await this.#describePull(gh, repo, memo, document, parsed.issue);
    } finally {
      // What was written is remembered even when a later write failed.
      const after = encodeMemo(memo);
      if (JSON.stringify(after) !== before) await this.deps.store.putSurfaceMemo(runId, after);
    }
  }

  async #writeAll(
    runId: string,
    run: LoadedRun,
    gh: GitHub,
    repo: RepoRef,
    memo: RunMemo,
    issue: number,
  ): Promise<void> {
    const { stored, document } = run;
    const { definition, state } = document;
    memo.botLogin ??= await this.deps.installations.botLogin();
    memo.comments ??= await findMarkedComments(gh, repo, issue, memo.botLogin);

    if (state.branchPushed && memo.pull === undefined) {
      const pull = await ensurePullRequest(gh, repo, definition.branch, definition, issue);
      if (pull !== undefined) memo.pull = pull;
    }
    const runPageUrl = this.deps.runPageUrl?.(stored.repo, runId);
    const checkRunUrl = await this.#writeCheckRuns(runId, document, gh, repo, memo, runPageUrl);
    if (state.awaiting?.kind === "approval" && state.active !== undefined) {
      await this.#announceApproval(gh, repo, memo, { definition, state }, issue, runPageUrl);
    }
    const queuePosition =
      state.status === "queued"
        ? await this.deps.admission.queuePosition(stored.repo, stored.workflow, runId)
        : undefined;
    const body = renderStatusComment(definition, state, {
      ...(memo.pull === undefined ? {} : { pullRequestUrl: memo.pull.url }),
      ...(checkRunUrl === undefined || checkRunUrl === "" ? {} : { checkRunUrl }),
      ...(queuePosition === undefined ? {} : { queuePosition }),
      ...(runPageUrl === undefined ? {} : { runPageUrl }),
      ...devboxNoticeOf(this.deps.devboxNotice?.(runId)),
    });
    const written = fingerprint(body);
    if (written === memo.statusFingerprint) return;
    const marker = statusMarker(runId);
    const commentId = memo.comments.get(marker);
    // A person may have deleted the status comment: the run gets it back.
    const edited = commentId !== undefined && (await updateComment(gh, repo, commentId, body));
    if (!edited) {
      memo.comments.set(
        marker,
        await createMarkedComment(gh, repo, issue, marker, body, memo.botLogin),
      );
    }
    memo.statusFingerprint = written;
  }

  /** Writes the run's check runs on its last commit; returns the URL of the run's own check. */
  async #writeCheckRuns(
    runId: string,
    document: RunDocument,
    gh: GitHub,
    repo: RepoRef,
    memo: RunMemo,
    runPageUrl: string | undefined,
  ): Promise<string | undefined> {
    const { definition, state } = document;
    if (state.lastSha === undefined) return undefined;
    let checkRunUrl: string | undefined;
    const evidence = (await this.#runs.evidence(runId)).map((record) => record.entry);
    const head = { sha: state.lastSha, earlier: checkpointShas(evidence) };
    for (const spec of renderCheckRuns(definition, state, evidence, runPageUrl)) {
      const url = await upsertCheckRun(gh, repo, memo.checks, spec, head);
      if (spec.externalId === runId) checkRunUrl = url;
    }
    await supersedeOldRunChecks(gh, repo, memo.checks, runId, state.lastSha);
    return checkRunUrl;
  }

  /**
   * Rewrites the pull request's body (nodes, verdicts, diffstat) when the run settles (waits,
   * or ends) in a state it was not written for, and takes the pull request out of draft when
   * the run succeeded (unless CLUSTERCODE_PR_READY=never).
   */
  async #describePull(
    gh: GitHub,
    repo: RepoRef,
    memo: RunMemo,
    document: RunDocument,
    issue: number,
  ): Promise<void> {
    const pull = memo.pull;
    const { definition, state } = document;
    if (pull === undefined || !SETTLED.has(state.status)) return;
    const key = `${state.status}|${state.visits.length}|${state.lastSha ?? ""}`;
    if (memo.pullBody !== key) {
      // The diffstat is a courtesy: when GitHub cannot compare (an outage, a diff too large),
      // the body goes without it, the status comment is not held up, and a later sync tries again.
      const diffstat =
        state.lastSha === undefined
          ? undefined
          : await diffstatOf(gh, repo, definition.baseBranch, state.lastSha).catch(
              (error: unknown) => {
                this.deps.onError(error, state.runId);
                return null;
              },
            );
      const body = renderPullBody(definition, state, issue, diffstat ?? undefined);
      await editPullBody(gh, repo, pull.number, body);
      if (diffstat !== null) memo.pullBody = key;
    }
    if (state.status === "succeeded" && memo.ready !== true && this.deps.pullReady !== "never") {
      await markReadyForReview(gh, repo, pull);
      memo.ready = true;
    }
    // A run that succeeded on a branch that no longer merges with its base goes back to work.
    const sha = state.lastSha;
    if (state.status === "succeeded" && sha !== undefined && memo.mergeChecked !== sha) {
      await this.deps.onSucceeded?.({ gh, repo, runId: state.runId, pull: pull.number, sha });
      memo.mergeChecked = sha;
    }
  }

  async #announceApproval(
    gh: GitHub,
    repo: RepoRef,
    memo: RunMemo,
    { definition, state }: RunDocument,
    issue: number,
    runPageUrl: string | undefined,
  ): Promise<void> {
    const active = state.active;
    if (active === undefined || memo.comments === undefined || memo.botLogin === undefined) return;
    const marker = `<!-- clustercode:approval:${state.runId}/${active.visit} -->`;
    if (memo.comments.has(marker)) return;
    const node = definition.workflow.nodes[active.node];
    const approvers =
      (node?.kind === "approval" ? node.approvers : undefined) ??
      definition.workflow.approvers ??
      [];
    if (memo.pull !== undefined) {
      // GitHub refuses review requests for people who are not collaborators (422): the comment
      // below still reaches them, and the run's surfaces keep syncing.
      await requestReviews(gh, repo, memo.pull.number, approvers).catch((error: unknown) =>
        this.deps.onError(error, state.runId),
      );
    }
    const who = approvers.length === 0 ? "anyone with write access" : approvers.join(" ");
    const message =
      node?.kind === "approval" && node.message !== undefined ? `\n\n${node.message}` : "";
    const body = `${marker}\nClusterCode run \`${state.runId}\` waits for approval of **${active.node}** by ${who}.${message}\n\nAnswer with \`/approve [note]\` or \`/reject [reason]\`, a review of the pull request, ${runPageUrl === undefined ? "or the check run's buttons" : `the check run's buttons, or the [run page](${runPageUrl})`}.`;
    memo.comments.set(
      marker,
      await createMarkedComment(gh, repo, issue, marker, body, memo.botLogin),
    );
  }
}

function devboxNoticeOf(notice: string | undefined): { devboxNotice?: string } {
  return notice === undefined ? {} : { devboxNotice: notice };
}

/** The commits a run's checkpoints made: the heads its check runs may be on. */
function checkpointShas(evidence: EvidenceEntry[]): string[] {
  return evidence.flatMap((entry) =>
    entry.kind === "checkpoint" && typeof entry.sha === "string" ? [entry.sha] : [],
  );
}
