import { Cron } from "croner";
import type { RunDocument } from "../runtime/runtime.js";
import type { Store } from "../store/store.js";
import { callGitHub } from "./errors.js";
import { fullName, type GitHub, type RepoRef } from "./github.js";
import type { Installations } from "./installations.js";
import { reply } from "./replies.js";
import { isActive, parseRunBranch } from "./run-index.js";
import type { RunStarter } from "./starter.js";
import type { WorkflowFile } from "./workflow-source.js";

/** Who a scheduled run is started by. */
export const SCHEDULE_ACTOR = "clustercode[schedule]";

/** One cron schedule of a workflow on a repository's default branch. */
export interface ScheduleEntry {
  repo: RepoRef;
  workflow: string;
  index: number;
  cron: Cron;
  brief?: string;
}

/**
 * The cron schedules of every repository, registered from the default branch (on install and
 * on push). A tick fires the schedules due in the current minute; a store lease keyed by
 * schedule and minute makes one replica fire each. A schedule whose previous run is still
 * active skips (and says so on that run's tracking issue); otherwise it opens a tracking issue
 * and starts a run on it.
 */
export class Schedules {
  readonly #byRepo = new Map<string, ScheduleEntry[]>();
  /** Firings this process took (a lease held by the same holder would be a renewal). */
  readonly #fired = new Set<string>();
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

  /** Replaces the schedules of `repo` with those of its valid workflow files. */
  register(repo: RepoRef, files: WorkflowFile[]): ScheduleEntry[] {
    const entries: ScheduleEntry[] = [];
    for (const file of files) {
      if (!file.parsed.ok) continue;
      const { workflow } = file.parsed;
      (workflow.on.schedule ?? []).forEach((schedule, index) => {
        const cron = new Cron(schedule.cron, {
          paused: true,
          ...(schedule.timezone === undefined
            ? { timezone: "UTC" }
            : { timezone: schedule.timezone }),
        });
        entries.push({
          repo,
          workflow: workflow.name,
          index,
          cron,
          ...(schedule.brief === undefined ? {} : { brief: schedule.brief }),
        });
      });
    }
    this.#byRepo.set(fullName(repo), entries);
    return entries;
  }

  /** Fires every schedule due in the minute of `now`. */
  async tick(now = this.deps.now()): Promise<string[]> {
    const minute = Math.floor(now / 60_000) * 60_000;
    for (const key of this.#fired)
      if (!key.endsWith(new Date(minute).toISOString())) this.#fired.delete(key);
    const fired: string[] = [];
    for (const entries of this.#byRepo.values()) {
      for (const entry of entries) {
        if (entry.cron.nextRun(new Date(minute - 1000))?.getTime() !== minute) continue;
        const key = `schedule:${fullName(entry.repo)}#${entry.workflow}#${entry.index}@${new Date(minute).toISOString()}`;
        if (this.#fired.has(key)) continue;
        if (!(await this.deps.store.acquireLease(key, this.deps.holder, now, 86_400_000))) continue;
        this.#fired.add(key);
        fired.push(...(await this.#fire(entry, key, minute)));
      }
    }
    return fired;
  }

  /** Ticks every 20 s (so no minute is missed); errors go to `onError`. */
  start(intervalMs = 20_000): void {
    this.#timer = setInterval(() => {
      this.tick().catch(this.deps.onError);
    }, intervalMs);
    this.#timer.unref();
  }

  /** Stops ticking. */
  stop(): void {
    clearInterval(this.#timer);
  }

  async #fire(entry: ScheduleEntry, key: string, minute: number): Promise<string[]> {
    const repoName = fullName(entry.repo);
    const gh = await this.deps.installations.client(repoName);
    const previous = (await this.deps.store.listRuns(repoName, { limit: 100 })).find((run) => {
      const document = run.snapshot as RunDocument;
      return (
        run.workflow === entry.workflow &&
        document.definition.startedBy === SCHEDULE_ACTOR &&
        isActive(run.status)
      );
    });
    const when = new Date(minute).toISOString();
    if (previous !== undefined) {
      const issue = parseRunBranch((previous.snapshot as RunDocument).definition.branch)?.issue;
      if (issue !== undefined) {
        await reply(
          gh,
          entry.repo,
          issue,
          `ClusterCode skipped the scheduled run of ${entry.workflow} at ${when}: run \`${previous.runId}\` is still active.`,
        );
      }
      return [];
    }
    const title = `ClusterCode: ${entry.brief ?? entry.workflow} (${when.slice(0, 16).replace("T", " ")} UTC)`;
    const body = `Tracking issue of the scheduled run of workflow \`${entry.workflow}\` at ${when}.${entry.brief === undefined ? "" : `\n\n${entry.brief}`}`;
    const number = await openIssue(gh, entry.repo, title, body);
    return this.deps.starter.trigger({
      gh,
      repo: entry.repo,
      issue: { number, title, body },
      actor: SCHEDULE_ACTOR,
      key,
      select: { by: "schedule", workflow: entry.workflow },
      checkActor: false,
      ...(entry.brief === undefined ? {} : { brief: entry.brief }),
    });
  }
}

async function openIssue(gh: GitHub, repo: RepoRef, title: string, body: string): Promise<number> {
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
