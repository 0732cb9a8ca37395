import type { EvidenceEntry } from "../../engine/model.js";
import { isRetryable } from "../../errors/app-error.js";
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
import { moveRunBranch } from "./run-branch.js";
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

/** How many times a run's sync is tried in a row when it fails retryably. */
const SYNC_ATTEMPTS = 5;

/** How long a replica may hold a run's surfaces (released when its sync ends). */
const SURFACE_LEASE_MS = 15_000;
/** How many times a sync waits for another replica's sync of the run before giving up. */
const BUSY_ATTEMPTS = 20;

/** How many runs' memos a process keeps in memory (the store keeps them all). */
const MAX_MEMOS = 1000;

/** The background lane while it drains: the resync under way, if any. */
interface BackgroundLane {
  done: Promise<void>;
  syncing?: { runId: string; done: Promise<void> };
}

/**
 * Keeps a run's GitHub surfaces in step with its state: the status comment (found by its hidden
 * marker, edited in place), the draft PR once the branch has commits, check runs (found by
 * external id), and for a waiting approval, review requests and one comment mentioning the
 * approvers. Syncs of one run are serialised and coalesced: a burst of transitions costs one
 * sync of the latest state. What a sync wrote is remembered with the run (see RunMemo), so a
 * sync after a restart writes only what changed. Resyncs (after a restart) are a background
 * lane: one run at a time, and only while no interactive sync is running or waiting, so that a
 * reply or the next node's check run never queues behind a restart's resync of many runs.
 */
export class Surfaces {
  readonly #memos = new LruMap<string, RunMemo>(MAX_MEMOS);
  readonly #running = new Map<string, Promise<void>>();
  readonly #dirty = new Set<string>();
  /** Runs waiting for a background resync, oldest first. */
  readonly #backlog = new Set<string>();
  /** The background lane's drain, while it has work; with the resync under way, if any. */
  #lane: BackgroundLane | undefined;
  readonly #runs: RunRepository;

  constructor(
    private readonly deps: {
      store: Store;
      /**
       * This replica, as leases name their holder, when replicas share the store: a run's
       * surfaces are written under a lease, by one replica at a time, from the memo in the store.
       */
      holder?: string;
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
      /** How long a sync waits for more transitions to fold in; default 250 ms. */
      debounceMs?: number;
    },
  ) {
    this.#runs = new RunRepository(deps.store);
  }

  /** Asks for a sync of `runId`'s surfaces (soon, once, with its latest state). */
  request(runId: string): void {
    // This sync covers what a waiting resync of the run would do.
    this.#backlog.delete(runId);
    if (this.#running.has(runId)) {
      this.#dirty.add(runId);
      return;
    }
    const lane = this.#lane;
    const run = (async () => {
      let failures = 0;
      let busy = 0;
      // A resync of this run already under way finishes first (syncs of a run never overlap).
      if (lane?.syncing?.runId === runId) await lane.syncing.done;
      do {
        // A burst of transitions (a node ending, the next one starting) becomes one sync; a
        // sync again after a failure, or after another replica's sync, waits longer each time.
        const wait = (this.deps.debounceMs ?? 250) * 2 ** Math.min(failures + busy, 4);
        await new Promise((resolve) => setTimeout(resolve, wait));
        this.#dirty.delete(runId);
        try {
          // Another replica syncing the run now may have read it before this transition.
          if (await this.sync(runId)) failures = busy = 0;
          else if (++busy < BUSY_ATTEMPTS) this.#dirty.add(runId);
        } catch (error) {
          this.deps.onError(error, runId);
          // GitHub's outage or rate limit would leave the run's last state unshown: sync again
          // (a few times), finding the surfaces afresh by key, since a failed write may have
          // landed: from an empty memo, not the one in the store.
          this.#memos.set(runId, decodeMemo(undefined));
          if (isRetryable(error) && ++failures < SYNC_ATTEMPTS) this.#dirty.add(runId);
        }
      } while (this.#dirty.has(runId));
    })().finally(() => this.#running.delete(runId));
    this.#running.set(runId, run);
  }

  /**
   * Asks for a background resync of `runId` (after a restart): it waits for the interactive
   * syncs, and other runs' resyncs, to be done.
   */
  resync(runId: string): void {
    if (this.#running.has(runId)) return;
    this.#backlog.add(runId);
    if (this.#lane !== undefined) return;
    const lane: BackgroundLane = { done: Promise.resolve() };
    lane.done = this.#drainBacklog(lane).finally(() => (this.#lane = undefined));
    this.#lane = lane;
  }

  async #drainBacklog(lane: BackgroundLane): Promise<void> {
    for (;;) {
      // Interactive syncs first: the backlog waits while any runs or waits for its debounce.
      while (this.#running.size > 0) await Promise.allSettled([...this.#running.values()]);
      const [runId] = this.#backlog;
      if (runId === undefined) return;
      this.#backlog.delete(runId);
      // A run another replica is syncing now needs no resync from this one.
      const done = this.sync(runId).then(
        () => undefined,
        (error: unknown) => this.deps.onError(error, runId),
      );
      lane.syncing = { runId, done };
      await done;
      delete lane.syncing;
    }
  }

  /** Resolves once the syncs of `runId` asked for so far, and their retries, are done. */
  async shown(runId: string): Promise<void> {
    for (;;) {
      const running = this.#running.get(runId);
      const resyncing = this.#lane?.syncing?.runId === runId ? this.#lane.syncing.done : undefined;
      if (running === undefined && resyncing === undefined) return;
      await Promise.allSettled([running, resyncing]);
    }
  }

  /** Waits until no sync is running or asked for, in either lane. */
  async idle(): Promise<void> {
    while (this.#running.size > 0 || this.#lane !== undefined) {
      await Promise.allSettled([...this.#running.values(), this.#lane?.done]);
    }
  }

  /**
   * Brings every surface of `runId` up to date now; false when another replica is doing so
   * (it holds the run's surface lease).
   */
  async sync(runId: string): Promise<boolean> {
    const { store, holder } = this.deps;
    const lease = `surfaces/${runId}`;
    if (
      holder !== undefined &&
      !(await store.acquireLease(lease, holder, Date.now(), SURFACE_LEASE_MS))
    )
      return false;
    try {
      const run = await this.#runs.get(runId);
      if (run !== undefined) await this.#syncStored(runId, run);
      return true;
    } finally {
      if (holder !== undefined) {
        // Another replica may write the surfaces next: the memo to start from is the store's.
        this.#memos.delete(runId);
        await store.releaseLease(lease, holder);
      }
    }
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
      await this.#write(runId, run, gh, repo, memo, parsed.issue);
      // The pull request's description comes last: when it cannot be written (a permission the
      // installation lacks, an outage), the run's check runs and status comment already are.
      await this.#describePull(gh, repo, memo, document, parsed.issue);
    } finally {
      // What was written is remembered even when a later write failed.
      const after = encodeMemo(memo);
      if (JSON.stringify(after) !== before) await this.deps.store.putSurfaceMemo(runId, after);
    }
  }

  async #write(
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

    // A prototype's winner works on its own branch: its commits are brought onto the run
    // branch, the pull request's head, so the pull request shows what the run ships.
    if (
      state.branch !== definition.branch &&
      state.lastSha !== undefined &&
      memo.head !== state.lastSha
    ) {
      await moveRunBranch(gh, repo, definition.branch, state.lastSha);
      memo.head = state.lastSha;
    }
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
