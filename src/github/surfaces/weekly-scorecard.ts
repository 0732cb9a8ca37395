import { isRetryable } from "../../errors/app-error.js";
import { readVerdicts } from "../../scorecard/read-verdicts.js";
import { formatShare, scorecard, type Verdict } from "../../scorecard/scorecard.js";
import type { Store } from "../../store/store.js";
import { isLogin } from "./comments.js";
import { callGitHub } from "../client/errors.js";
import type { GitHub, RepoRef } from "../client/github.js";
import type { Installations } from "../client/installations.js";
import { findIssue, openIssue } from "../handlers/schedules.js";
import { RunRepository } from "../../store/run-repository.js";

/** The title of the issue the weekly summary is posted on. */
export const SCORECARD_TITLE = "ClusterCode judge scorecard";
const WEEK_MS = 7 * 86_400_000;
/** How long one replica may take to post; after that another one takes the week over. */
const POSTING_MS = 5 * 60_000;

/** The ISO week of a time, in UTC: `2026-W49`. */
export function isoWeek(at: number): string {
  const date = new Date(at);
  const day = (date.getUTCDay() + 6) % 7; // Monday 0
  const thursday = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate() - day + 3);
  const year = new Date(thursday).getUTCFullYear();
  const week = Math.floor((thursday - Date.UTC(year, 0, 1)) / WEEK_MS) + 1;
  return `${year}-W${String(week).padStart(2, "0")}`;
}

/** The summary comment of a week: the judges' figures and what overturned them. */
export function renderWeeklyScorecard(week: string, verdicts: readonly Verdict[]): string {
  const rows = scorecard(verdicts).map(
    (row) =>
      `| ${row.provider} | \`${row.model}\` | ${row.verdicts} | ${row.overturned} | ${formatShare(row.overturnRate)} | ${formatShare(row.independentShare)} |`,
  );
  const overturned = verdicts
    .filter((v) => v.overturned !== undefined)
    .slice(0, 20)
    .map((v) => `- \`${v.runId}\` ${v.node}: said **${v.label}**; ${v.overturned?.why ?? ""}`);
  return [
    `<!-- clustercode:scorecard:${week} -->`,
    `### Judge scorecard, week ${week}`,
    "",
    rows.length === 0
      ? "No judge gave a verdict in the runs of the last seven days."
      : [
          "| provider | model | verdicts | overturned | overturn rate | independent |",
          "| --- | --- | --- | --- | --- | --- |",
          ...rows,
        ].join("\n"),
    ...(overturned.length === 0 ? [] : ["", "Overturned:", ...overturned]),
  ].join("\n");
}

/**
 * The opt-in weekly summary of the judges' record (`CLUSTERCODE_SCORECARD_REPOS`): once per ISO
 * week, for each listed repository, a comment on its tracking issue (opened by the app, found
 * again by title and author) with the scorecard of the runs of the last seven days. A store
 * lease per repository and week makes one replica post it, and the comment's marker keeps a
 * post that a crash interrupted from being made twice.
 */
export class WeeklyScorecard {
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly deps: {
      store: Store;
      installations: Installations;
      holder: string;
      now: () => number;
      repos: readonly string[];
      onError: (error: unknown) => void;
    },
  ) {}

  /** Posts this week's summary where it is due; returns the repositories it posted on. */
  async tick(): Promise<string[]> {
    const { store, holder, now, onError } = this.deps;
    const week = isoWeek(now());
    const posted: string[] = [];
    for (const repo of this.deps.repos) {
      const key = `scorecard:${repo}@${week}`;
      if (!(await store.acquireLease(key, holder, now(), POSTING_MS))) continue;
      try {
        if (await this.#post(repo, week)) posted.push(repo);
      } catch (error) {
        onError(error);
        if (isRetryable(error)) {
          await store.releaseLease(key, holder).catch(onError);
          continue;
        }
      }
      await store.acquireLease(key, holder, now(), 2 * WEEK_MS).catch(onError);
    }
    return posted;
  }

  async #post(repoName: string, week: string): Promise<boolean> {
    const [owner = "", name = ""] = repoName.split("/");
    const repo: RepoRef = { owner, repo: name, defaultBranch: "" };
    const { store, installations, now } = this.deps;
    const gh = await installations.client(repoName);
    const botLogin = await installations.botLogin();
    const since = new Date(now() - 366 * 86_400_000).toISOString();
    const issue =
      (await findIssue(gh, repo, { title: SCORECARD_TITLE, since, botLogin })) ??
      (await openIssue(
        gh,
        repo,
        SCORECARD_TITLE,
        "ClusterCode posts here, once a week, how often each judge's verdicts were overturned by what followed.",
      ));
    const lastWeek = new Date(now() - 8 * 86_400_000).toISOString();
    if (await postedAlready(gh, repo, issue, { week, since: lastWeek, botLogin })) return false;
    const repository = new RunRepository(store);
    const runs = (await repository.list(repoName, { limit: Infinity })).filter(
      (run) => run.stored.createdAt >= now() - WEEK_MS,
    );
    const body = renderWeeklyScorecard(week, await readVerdicts(runs, repository));
    await callGitHub("post the weekly scorecard", () =>
      gh.request("POST /repos/{owner}/{repo}/issues/{issue_number}/comments", {
        owner,
        repo: name,
        issue_number: issue,
        body,
      }),
    );
    return true;
  }

  /** Ticks every hour, one tick at a time; errors go to `onError`. */
  start(intervalMs = 3_600_000): void {
    let ticking = false;
    const tick = () => {
      if (ticking) return;
      ticking = true;
      this.tick()
        .catch(this.deps.onError)
        .finally(() => (ticking = false));
    };
    this.#timer = setInterval(tick, intervalMs);
    this.#timer.unref();
    tick();
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}

/** Did the app post this week's summary already (a crash after the post, before the lease)? */
async function postedAlready(
  gh: GitHub,
  repo: RepoRef,
  issue: number,
  { week, since, botLogin }: { week: string; since: string; botLogin: string },
): Promise<boolean> {
  const { data } = await callGitHub("read the scorecard issue", () =>
    gh.request("GET /repos/{owner}/{repo}/issues/{issue_number}/comments", {
      owner: repo.owner,
      repo: repo.repo,
      issue_number: issue,
      since,
      per_page: 100,
    }),
  );
  return data.some(
    (comment) =>
      isLogin(comment.user?.login, botLogin) &&
      (comment.body ?? "").includes(`<!-- clustercode:scorecard:${week} -->`),
  );
}
