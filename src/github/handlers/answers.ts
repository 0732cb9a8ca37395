import type { RunEvent } from "../../engine/model.js";
import type { Runtime } from "../../runtime/runtime.js";
import type { Store } from "../../store/store.js";
import type { CommentCommand } from "./commands.js";
import { callGitHub } from "../client/errors.js";
import { fullName, type GitHub, type RepoRef } from "../client/github.js";
import { mayApprove, mayWrite } from "../client/permissions.js";
import { reply } from "../client/replies.js";
import {
  isActive,
  parseRunBranch,
  runsOfIssue,
  type IndexedRun,
} from "../../runtime/issue-runs.js";
import { RunRepository, type RunDocument } from "../../store/run-repository.js";
import { branchMoved, waitingApproval } from "../../runtime/waiting-approval.js";
import { branchHead } from "../client/branch-head.js";
import type { UntimedFeedback } from "./review-feedback.js";
import { cleanFeedback, cleanNote } from "./clean-feedback.js";

/** Where a person spoke: the repository, the issue or PR, who, and a link to it. */
export interface Speaker {
  gh: GitHub;
  repo: RepoRef;
  /** The issue or pull request number the reply goes to. */
  issue: number;
  actor: string;
  /** URL of the comment, review or check run: the evidence of where. */
  where: string;
}

/** How long a `once` key is remembered: longer than any run stays open for rework. */
const ONCE_MS = 90 * 24 * 3_600_000;

/** What a review adds to an approval answer: the commit it saw, and what it said. */
export interface ReviewAnswer {
  /** The commit the review saw: it approves only while that is the run branch's head. */
  headSha?: string;
  feedback?: UntimedFeedback[];
}

/** What came of an approval answer: applied, or why not (the text a reply says). */
export type ApprovalOutcome = { applied: true } | { applied: false; why?: string };

type RunCommand = Exclude<CommentCommand, { kind: "run" } | { kind: "invalid" }>;

/**
 * Turns people's answers into engine events: approvals (from comments, reviews and check-run
 * buttons, checked against the approvers), and `/cancel`, `/retry`, `/resolve`, `/clustercode
 * status` (checked for write access). Anyone not allowed, or an answer the engine refuses, gets
 * a reply saying why.
 */
export class Answers {
  readonly #runs: RunRepository;

  constructor(private readonly deps: { store: Store; runtime: Runtime; now: () => number }) {
    this.#runs = new RunRepository(deps.store);
  }

  /**
   * Run `runId` when it belongs to `repo`: a run is answered only from its own repository, so a
   * branch named like a run in another repository (or a fork) never reaches it.
   */
  async #runOf(repo: RepoRef, runId: string): Promise<RunDocument | undefined> {
    const run = await this.#runs.get(runId);
    return run?.stored.repo === fullName(repo) ? run.document : undefined;
  }

  /** Handles a run command typed on an issue (or a pull request, `pull` true). */
  async onCommand(speaker: Speaker, command: RunCommand, pull: boolean): Promise<void> {
    const runs = pull
      ? await this.#runsOfPull(speaker)
      : await runsOfIssue(this.deps.store, fullName(speaker.repo), speaker.issue);
    const run = pickRun(runs, command);
    if (run === undefined) {
      await reply(
        speaker.gh,
        speaker.repo,
        speaker.issue,
        `@${speaker.actor} there is no ClusterCode run here that \`/${command.kind}\` applies to.`,
      );
      return;
    }
    if (command.kind === "rework") {
      await this.rework(speaker, run.stored.runId, "comment", [
        {
          source: "rework",
          label: "rework",
          summary: `@${speaker.actor} asked for rework`,
          detail: command.note,
          actor: `@${speaker.actor}`,
          url: speaker.where,
        },
      ]);
      return;
    }
    if (command.kind === "approve" || command.kind === "reject") {
      // The run was read to pick it: the answer is checked and applied on that read.
      const outcome = await this.#applyTo(
        speaker,
        { runId: run.stored.runId, document: run.document },
        { decision: command.kind === "approve" ? "approved" : "rejected", note: command.note },
      );
      if (!outcome.applied && outcome.why !== undefined)
        await reply(speaker.gh, speaker.repo, speaker.issue, outcome.why);
      return;
    }
    const permission = await mayWrite(speaker.gh, speaker.repo, speaker.actor);
    if (!permission.ok) {
      await reply(
        speaker.gh,
        speaker.repo,
        speaker.issue,
        `ClusterCode did not act on \`/${command.kind}\`: ${permission.why}`,
      );
      return;
    }
    if (command.kind === "status") {
      await reply(speaker.gh, speaker.repo, speaker.issue, statusLine(run));
      return;
    }
    const who = { actor: speaker.actor, where: speaker.where, at: this.deps.now() };
    await this.#deliver(speaker, run.stored.runId, controlEvent(command, who));
  }

  /** The issue a run belongs to (from its branch), where replies about it go. */
  async issueOf(runId: string): Promise<number | undefined> {
    const run = await this.#runs.get(runId);
    return run === undefined ? undefined : parseRunBranch(run.document.definition.branch)?.issue;
  }

  /** Answers the approval `runId` waits on, if `speaker` may; replies when not. */
  async answerApproval(
    speaker: Speaker,
    runId: string,
    decision: "approved" | "rejected",
    note: string | undefined,
    /** The visit a check run's button belongs to: a button of an earlier approval answers nothing. */
    visit?: number,
    review?: ReviewAnswer,
  ): Promise<void> {
    const outcome = await this.applyApproval(speaker, runId, decision, note, visit, review);
    if (!outcome.applied && outcome.why !== undefined)
      await reply(speaker.gh, speaker.repo, speaker.issue, outcome.why);
  }

  /**
   * Applies an answer to the approval `runId` waits on when `who` may give it (the approvers,
   * teams, write access; self-approval is the engine's to refuse), recording who and where.
   * Says why not otherwise; `why` is absent for a run of another repository (never answered).
   */
  async applyApproval(
    who: Omit<Speaker, "issue">,
    runId: string,
    decision: "approved" | "rejected",
    note: string | undefined,
    visit?: number,
    review: ReviewAnswer = {},
  ): Promise<ApprovalOutcome> {
    const run = await this.#runOf(who.repo, runId);
    if (run === undefined) return { applied: false };
    return this.#applyTo(who, { runId, document: run }, { decision, note, visit, review });
  }

  /** Applies an answer to a run already read (see {@link applyApproval}). */
  async #applyTo(
    who: Omit<Speaker, "issue">,
    run: { runId: string; document: RunDocument },
    answer: {
      decision: "approved" | "rejected";
      note: string | undefined;
      visit?: number | undefined;
      review?: ReviewAnswer;
    },
  ): Promise<ApprovalOutcome> {
    const { runId } = run;
    const { decision, visit, review = {} } = answer;
    const note = cleanNote(answer.note);
    // An approval counts for the branch's head on GitHub as it is now, not as the run left it.
    const head =
      decision === "approved" && run.document.state.awaiting?.kind === "approval"
        ? await branchHead(who.gh, who.repo, run.document.definition.branch)
        : undefined;
    const waiting = waitingApproval(run.document, {
      runId,
      actor: who.actor,
      ...(visit === undefined ? {} : { visit }),
      ...(review.headSha === undefined ? {} : { headSha: review.headSha }),
      ...(head === undefined ? {} : { branchHead: head }),
    });
    if (!waiting.ok) return { applied: false, why: waiting.why };
    const permission = await mayApprove(who.gh, who.repo, who.actor, waiting.approval.approvers);
    if (!permission.ok) {
      return { applied: false, why: `ClusterCode did not accept this answer: ${permission.why}` };
    }
    const delivery = await this.deps.runtime.deliver(runId, {
      type: "approval.answer",
      decision,
      actor: who.actor,
      node: waiting.approval.node,
      where: who.where,
      at: this.deps.now(),
      ...(note === undefined ? {} : { note }),
      ...(review.headSha === undefined ? {} : { headSha: review.headSha }),
      ...(review.feedback === undefined
        ? {}
        : {
            feedback: review.feedback.map((item) => ({
              ...cleanFeedback(item),
              at: this.deps.now(),
            })),
          }),
    });
    if (!delivery.applied) {
      return {
        applied: false,
        why: `ClusterCode did not apply this to run \`${runId}\`: ${delivery.refused.message}.`,
      };
    }
    return { applied: true };
  }

  /**
   * A review requesting changes by someone who may approve: rejects the approval the run waits
   * on with the review as feedback, or sends a run that succeeded back to work; replies why
   * when it does neither.
   */
  async requestChanges(
    speaker: Speaker,
    runId: string,
    review: { note: string; feedback: UntimedFeedback[]; headSha: string },
  ): Promise<void> {
    const run = await this.#runOf(speaker.repo, runId);
    if (run === undefined) return;
    const { state } = run;
    if (state.awaiting?.kind === "approval") {
      await this.answerApproval(
        speaker,
        runId,
        "rejected",
        review.note === "" ? undefined : review.note,
        undefined,
        { feedback: review.feedback },
      );
      return;
    }
    await this.rework(speaker, runId, "review", review.feedback, review.headSha);
  }

  /**
   * Sends run `runId`, which succeeded, back to work (`/rework`, a review requesting changes)
   * when `speaker` may approve it; replies why nothing happened otherwise (not allowed, not a
   * succeeded run, past the workflow's rework cap, no `rework:` in the workflow).
   */
  async rework(
    speaker: Speaker,
    runId: string,
    source: "review" | "comment",
    feedback: UntimedFeedback[],
    headSha?: string,
  ): Promise<void> {
    const run = await this.#runOf(speaker.repo, runId);
    if (run === undefined) return;
    const { definition } = run;
    const permission = await mayApprove(
      speaker.gh,
      speaker.repo,
      speaker.actor,
      definition.workflow.approvers,
    );
    if (!permission.ok) {
      await reply(
        speaker.gh,
        speaker.repo,
        speaker.issue,
        `ClusterCode did not send run \`${runId}\` back to work: ${permission.why}`,
      );
      return;
    }
    const why = await this.sendBack(runId, {
      source,
      actor: speaker.actor,
      where: speaker.where,
      feedback,
      ...(headSha === undefined ? {} : { headSha }),
    });
    if (why !== undefined) {
      await reply(
        speaker.gh,
        speaker.repo,
        speaker.issue,
        `@${speaker.actor} ClusterCode did not send run \`${runId}\` back to work: ${why}.`,
      );
    }
  }

  /**
   * Whether run `runId` of `repo` ended `succeeded` with `sha` as its branch's head: what CI or a
   * conflict may send back (a failure on an older commit is about work since replaced).
   */
  async succeededAt(repo: RepoRef, runId: string, sha: string): Promise<boolean> {
    const state = (await this.#runOf(repo, runId))?.state;
    return state?.status === "succeeded" && state.lastSha === sha;
  }

  /**
   * True the first time `key` is claimed, and again only for the same `holder` (the delivery
   * that claimed it, retried): a durable once, safe under duplicate deliveries and replicas.
   */
  async once(key: string, holder: string): Promise<boolean> {
    return this.deps.store.acquireLease(`once/${key}`, holder, this.deps.now(), ONCE_MS);
  }

  /**
   * Delivers `run.rework` to `runId`; undefined when the run went back to work, else why not
   * (the reason the engine's `rework.refused` evidence records).
   */
  async sendBack(
    runId: string,
    rework: {
      source: "review" | "comment" | "check" | "conflict";
      actor?: string;
      where?: string;
      headSha?: string;
      feedback: UntimedFeedback[];
    },
  ): Promise<string | undefined> {
    const at = this.deps.now();
    const delivery = await this.deps.runtime.deliver(runId, {
      type: "run.rework",
      ...rework,
      feedback: rework.feedback.map((item) => ({ ...cleanFeedback(item), at })),
      at,
    });
    return delivery.applied ? undefined : delivery.refused.message;
  }

  /**
   * Records on run `runId` what happened to its work on GitHub (its pull request closed, a check
   * failing on its branch), when the run belongs to `repo`. The judge scorecard reads it.
   */
  async observe(
    repo: RepoRef,
    runId: string,
    observed: Omit<Extract<RunEvent, { type: "run.observed" }>, "type" | "at">,
  ): Promise<void> {
    if ((await this.#runOf(repo, runId)) === undefined) return;
    await this.deps.runtime.deliver(runId, {
      type: "run.observed",
      ...observed,
      at: this.deps.now(),
    });
  }

  /**
   * The run branch of `runId` moved on GitHub to `sha` (a `pull_request.synchronize`): when that
   * is not the checkpoint of the run waiting on an approval, the run records it (`branch.moved`
   * evidence) and the pull request is told that no approval counts now, and why.
   */
  async branchMovedTo(speaker: Speaker, runId: string, sha: string): Promise<void> {
    const run = await this.#runOf(speaker.repo, runId);
    // Only a run waiting on an approval: while it works, its own checkpoint's push may be
    // delivered before the run recorded the checkpoint.
    if (run?.state.awaiting?.kind !== "approval") return;
    const moved = branchMoved(run.state.lastSha, sha);
    if (moved === undefined) return;
    await this.deps.runtime.deliver(runId, {
      type: "run.observed",
      what: "branch.moved",
      sha,
      ...(speaker.where === "" ? {} : { where: speaker.where }),
      at: this.deps.now(),
    });
    await reply(
      speaker.gh,
      speaker.repo,
      speaker.issue,
      `Pending approvals no longer count: ${moved(runId)}`,
    );
  }

  async #deliver(speaker: Speaker, runId: string, event: RunEvent): Promise<void> {
    const delivery = await this.deps.runtime.deliver(runId, event);
    if (!delivery.applied) {
      await reply(
        speaker.gh,
        speaker.repo,
        speaker.issue,
        `ClusterCode did not apply this to run \`${runId}\`: ${delivery.refused.message}.`,
      );
    }
  }

  async #runsOfPull(speaker: Speaker): Promise<IndexedRun[]> {
    const { data } = await callGitHub(`read pull request #${speaker.issue}`, () =>
      speaker.gh.request("GET /repos/{owner}/{repo}/pulls/{pull_number}", {
        owner: speaker.repo.owner,
        repo: speaker.repo.repo,
        pull_number: speaker.issue,
      }),
    );
    const parsed = parseRunBranch(data.head.ref);
    if (parsed === undefined) return [];
    const runs = await runsOfIssue(this.deps.store, fullName(speaker.repo), parsed.issue);
    return runs.filter((run) => run.stored.runId === parsed.runId);
  }
}

/**
 * The run a command is about: the newest one (runs come newest first) in the state the command
 * applies to. A failed run that a newer run of its workflow followed is not retried: that would
 * make two active runs of one workflow on the issue.
 */
function pickRun(runs: IndexedRun[], command: RunCommand): IndexedRun | undefined {
  const awaiting = (kind: string) => runs.find((run) => run.document.state.awaiting?.kind === kind);
  const latest = runs.filter(
    (run, index) =>
      !runs.slice(0, index).some((newer) => newer.stored.workflow === run.stored.workflow),
  );
  switch (command.kind) {
    case "approve":
    case "reject":
      return awaiting("approval") ?? runs.find((run) => isActive(run.stored.status)) ?? runs[0];
    case "resolve":
      return awaiting("lost") ?? runs[0];
    case "retry":
      return awaiting("lost") ?? latest.find((run) => run.stored.status === "failed") ?? runs[0];
    case "cancel":
      return runs.find((run) => isActive(run.stored.status)) ?? runs[0];
    case "status":
      return runs[0];
    case "rework":
      return runs.find((run) => run.stored.status === "succeeded") ?? runs[0];
  }
}

/** The one-line answer to `/status`. */
function statusLine(run: IndexedRun): string {
  const { state } = run.document;
  const where = state.active === undefined ? "" : ` at **${state.active.node}**`;
  const reason = state.reason === undefined ? "" : ` (${state.reason})`;
  return `ClusterCode run \`${run.stored.runId}\` of ${run.stored.workflow}: **${state.status}**${where}${reason}.`;
}

/** The event of `/cancel`, `/retry` or `/resolve`, by `who`. */
function controlEvent(
  command: Extract<RunCommand, { kind: "cancel" | "retry" | "resolve" }>,
  who: { actor: string; where: string; at: number },
): RunEvent {
  if (command.kind === "cancel")
    return {
      type: "run.cancel",
      ...who,
      ...(command.note === undefined
        ? {}
        : { reason: `cancelled by ${who.actor}: ${command.note}` }),
    };
  if (command.kind === "retry")
    return { type: "run.retry", ...who, ...(command.resetBudget ? { resetBudget: true } : {}) };
  return {
    type: "run.resolve",
    outcome: command.outcome,
    ...who,
    ...(command.note === undefined ? {} : { note: command.note }),
  };
}
