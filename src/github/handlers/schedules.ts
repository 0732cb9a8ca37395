import { Cron } from "croner";
import { isRetryable } from "../../errors/app-error.js";
import type { Store, StoredSchedule } from "../../store/store.js";
import { isLogin } from "../surfaces/comments.js";
import { callGitHub } from "../client/errors.js";
import { fullName, type GitHub, type RepoRef } from "../client/github.js";
import type { Installations } from "../client/installations.js";
import { reply } from "../client/replies.js";
import { parseRunBranch } from "../../runtime/issue-runs.js";
import { runIdOf } from "../../runtime/issue-run-creation.js";
import type { RunStarter } from "./starter.js";
import type { WorkflowFile } from "../client/workflow-source.js";
import { RunRepository } from "../../store/run-repository.js";

/** Who a scheduled run is started by. */
export const SCHEDULE_ACTOR = "clustercode[schedule]";

/** How far back a tick looks for firings that were missed (a crash, a failure, no replica up). */
export const CATCH_UP_MS = 10 * 60_000;
/** How long one replica may take to fire; after that another replica takes the firing over. */
const FIRING_MS = 5 * 60_000;
/** How long a fired schedule's lease is kept: well past the catch-up window. */
const FIRED_MS = 86_400_000;

/**
 * The cron schedules of every repository, registered in the store from the default branch (on
 * install, on a push touching `.clustercode/`, and for every installed repository when a
 * process starts), so every replica fires the same, current schedules. A tick fires the
 * minutes due since {@link CATCH_UP_MS} ago, never before a schedule was first registered; a
 * store lease keyed by schedule and minute makes one replica fire each. The lease is short
 * while firing and long once fired, so a firing that a crash or a retryable error interrupted
 * is taken up again by a later tick of any replica. A schedule whose previous run is still
 * active skips (and says so on that run's tracking issue); otherwise it opens a tracking issue
 * (or finds the one an interrupted firing opened) and starts a run on it.
 */
export class Schedules {
  /** Parsed crons, by expression and time zone. */
  readonly #crons = new Map<string, Cron>();
  /**
   * Firings this process took or found taken, by key: their minute, and when to try again
   * (never for its own: a lease held by the same holder would be a renewal).
   */
  readonly #taken = new Map<string, { minute: number; retryAt: number }>();
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly deps: {
      store: Store;
      starter: RunStarter;
      installations: Installations;
      holder: string;
      now: () => number;
      onError: (error: unknown) => void;
    },
  ) {}

  /**
   * Replaces the schedules of `repo` with those of its valid workflow files. A schedule
   * registered before (same workflow, cron, time zone) keeps the time it was first registered.
   */
  async register(repo: RepoRef, files: WorkflowFile[]): Promise<StoredSchedule[]> {
    const { store } = this.deps;
    const now = this.deps.now();
    const before = await store.getSchedules(fullName(repo));
    const known = new Map(before?.schedules.map((s) => [s.id, s.since]));
    const schedules: StoredSchedule[] = [];
    for (const file of files) {
      if (!file.parsed.ok) continue;
      const { workflow } = file.parsed;
      for (const schedule of workflow.on.schedule ?? []) {
        const timezone = schedule.timezone ?? "UTC";
        // Two identical lines are two schedules: the second gets a suffix.
        const base = `${workflow.name}#${schedule.cron}#${timezone}`;
        let id = base;
        for (let n = 2; schedules.some((s) => s.id === id); n++) id = `${base}#${n}`;
        schedules.push({
          workflow: workflow.name,
          id,
          cron: schedule.cron,
          timezone,
          since: known.get(id) ?? now,
          ...(schedule.brief === undefined ? {} : { brief: schedule.brief }),
        });
      }
    }
    await store.putSchedules({
      repo: fullName(repo),
      defaultBranch: repo.defaultBranch,
      schedules,
    });
    return schedules;
  }

  /** Fires every schedule due since {@link CATCH_UP_MS} before `now` and not fired yet. */
  async tick(now = this.deps.now()): Promise<string[]> {
    const { store, holder, onError } = this.deps;
    // Leases are taken at the time of taking them: a tick may take a while.
    const began = this.deps.now();
    const at = () => now + (this.deps.now() - began);
    for (const [key, { minute }] of this.#taken)
      if (minute < now - CATCH_UP_MS - 60_000) this.#taken.delete(key);
    const fired: string[] = [];
    for (const record of await store.listSchedules()) {
      const [owner = "", name = ""] = record.repo.split("/");
      const repo = { owner, repo: name, defaultBranch: record.defaultBranch };
      for (const schedule of record.schedules) {
        const from = Math.max(now - CATCH_UP_MS, schedule.since - 1);
        for (const minute of dueMinutes(this.#cron(schedule), from, now)) {
          const key = `schedule:${record.repo}#${schedule.id}@${new Date(minute).toISOString()}`;
          if ((this.#taken.get(key)?.retryAt ?? 0) > now) continue;
          this.#taken.set(key, { minute, retryAt: Infinity });
          try {
            if (!(await store.acquireLease(key, holder, at(), FIRING_MS))) {
              // Another replica fires it; should that replica die, its lease ends.
              this.#taken.set(key, { minute, retryAt: now + FIRING_MS });
              continue;
            }
            fired.push(...(await this.#fire(repo, schedule, key, minute)));
          } catch (error) {
            onError(error);
            if (isRetryable(error)) {
              // Free the firing for the next tick, here or on another replica.
              this.#taken.delete(key);
              await store.releaseLease(key, holder).catch(onError);
              continue;
            }
          }
          await store.acquireLease(key, holder, at(), FIRED_MS).catch(onError);
        }
      }
    }
    return fired;
  }

  /** Ticks every 20 s (so no minute is missed), one tick at a time; errors go to `onError`. */
  start(intervalMs = 20_000): void {
    let ticking = false;
    this.#timer = setInterval(() => {
      if (ticking) return;
      ticking = true;
      this.tick()
        .catch(this.deps.onError)
        .finally(() => (ticking = false));
    }, intervalMs);
    this.#timer.unref();
  }

  /** Stops ticking. */
  stop(): void {
    clearInterval(this.#timer);
  }

  #cron(schedule: StoredSchedule): Cron {
    const name = `${schedule.cron}@${schedule.timezone}`;
    let cron = this.#crons.get(name);
    if (cron === undefined) {
      cron = new Cron(schedule.cron, { paused: true, timezone: schedule.timezone });
      this.#crons.set(name, cron);
    }
    return cron;
  }

  async #fire(
    repo: RepoRef,
    schedule: StoredSchedule,
    key: string,
    minute: number,
  ): Promise<string[]> {
    const repoName = fullName(repo);
    const gh = await this.deps.installations.client(repoName);
    // This firing's own run, when an interrupted attempt created it, is not a previous one.
    const own = runIdOf(key, schedule.workflow);
    const active = await new RunRepository(this.deps.store).listActive({ repo: repoName });
    const previous = active.find(
      ({ stored, document }) =>
        stored.workflow === schedule.workflow &&
        stored.runId !== own &&
        document.definition.startedBy === SCHEDULE_ACTOR,
    );
    const when = new Date(minute).toISOString();
    if (previous !== undefined) {
      const issue = parseRunBranch(previous.document.definition.branch)?.issue;
      if (issue !== undefined) {
        await reply(
          gh,
          repo,
          issue,
          `ClusterCode skipped the scheduled run of ${schedule.workflow} at ${when}: run \`${previous.stored.runId}\` is still active.`,
        );
      }
      return [];
    }
    const title = `ClusterCode: ${schedule.brief ?? schedule.workflow} (${when.slice(0, 16).replace("T", " ")} UTC)`;
    const body = `Tracking issue of the scheduled run of workflow \`${schedule.workflow}\` at ${when}.${schedule.brief === undefined ? "" : `\n\n${schedule.brief}`}`;
    const botLogin = await this.deps.installations.botLogin();
    const number =
      (await findIssue(gh, repo, { title, since: when, botLogin })) ??
      (await openIssue(gh, repo, title, body));
    return this.deps.starter.trigger({
      gh,
      repo: repo,
      issue: { number, title, body },
      actor: SCHEDULE_ACTOR,
      key,
      select: { by: "schedule", workflow: schedule.workflow },
      checkActor: false,
      ...(schedule.brief === undefined ? {} : { brief: schedule.brief }),
    });
  }
}

/** The minutes (cron times) in `(from, to]`, oldest first. */
function dueMinutes(cron: Cron, from: number, to: number): number[] {
  const minutes: number[] = [];
  for (let next = cron.nextRun(new Date(from)); next !== null && next.getTime() <= to;) {
    minutes.push(next.getTime());
    next = cron.nextRun(next);
  }
  return minutes;
}

/** The tracking issue an interrupted firing opened already, found by its title and author. */
export async function findIssue(
  gh: GitHub,
  repo: RepoRef,
  { title, since, botLogin }: { title: string; since: string; botLogin: string },
): Promise<number | undefined> {
  const { data } = await callGitHub("look for a tracking issue", () =>
    gh.request("GET /repos/{owner}/{repo}/issues", {
      owner: repo.owner,
      repo: repo.repo,
      state: "all",
      since,
      sort: "created",
      direction: "desc",
      per_page: 100,
    }),
  );
  // Only one the app itself opened: a person or another app may open one with the same title.
  return data.find(
    (issue) =>
      issue.title === title &&
      isLogin(issue.user?.login, botLogin) &&
      issue.pull_request === undefined,
  )?.number;
}

/** Opens a tracking issue; returns its number. */
export async function openIssue(
  gh: GitHub,
  repo: RepoRef,
  title: string,
  body: string,
): Promise<number> {
  const { data } = await callGitHub("open a tracking issue", () =>
    gh.request("POST /repos/{owner}/{repo}/issues", {
      owner: repo.owner,
      repo: repo.repo,
      title,
      body,
    }),
  );
  return data.number;
}
