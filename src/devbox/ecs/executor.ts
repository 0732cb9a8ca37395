import {
  DescribeTasksCommand,
  ListTasksCommand,
  RunTaskCommand,
  StopTaskCommand,
} from "@aws-sdk/client-ecs";
import { toEcsError } from "./error.js";
import type { EcsExecutorOptions } from "./executor-options.js";
import { githubRepositoryOf, startedByOf } from "./names.js";
import { runTaskInput, taskEnvironment, warmRunTaskInput } from "./run-task.js";
import { TaskDefinitionCache, taskDefinitionInput } from "./task-definitions.js";
import { stopOrphanWarmTasks } from "./warm-orphans.js";
import { EcsWarmTasks } from "./warm-tasks.js";
import { SingleFlight } from "../single-flight.js";
import type { DevBoxExecutor, StartRequest } from "../executor.js";
import type { DevBoxSpec } from "../../engine/commands.js";
import { AGENT_ENV } from "../protocol.js";
import type { WarmTemplate } from "../warm-key.js";
import type { WarmClaim, WarmIdentities, WarmIdentity } from "../warm-protocol.js";

export type { EcsExecutorOptions } from "./executor-options.js";

/** One DevBox this executor started. */
interface Tracked {
  taskArn?: string;
  /** Cancels a placement retry that is waiting. */
  retry?: NodeJS.Timeout;
  stopping: boolean;
}

/**
 * Runs each DevBox as an ECS task on the cluster's EC2 capacity provider. `start` returns once
 * ECS accepted the task or answered with placement failures; those are retried in the background
 * with backoff (reported through `onStatus`) and, when every retry failed, reported as lost.
 * Started tasks are watched with DescribeTasks; one that stops on its own is reported as lost.
 */
export class EcsExecutor implements DevBoxExecutor {
  readonly #options: EcsExecutorOptions;
  readonly #definitions: TaskDefinitionCache;
  readonly #devboxes = new Map<string, Tracked>();
  readonly #starting = new SingleFlight();
  #poller: NodeJS.Timeout | undefined;
  #polling = false;
  #warm: EcsWarmTasks | undefined;

  constructor(options: EcsExecutorOptions) {
    this.#options = options;
    this.#definitions = new TaskDefinitionCache(options.client);
  }

  /** Starts the DevBox's task unless this executor or ECS already has one for it. */
  start(request: StartRequest): Promise<void> {
    return this.#starting.run(request.devboxId, () => this.#start(request));
  }

  async #start(request: StartRequest): Promise<void> {
    const known = this.#devboxes.get(request.devboxId);
    if (known !== undefined && !known.stopping) return;
    const tracked: Tracked = { stopping: false };
    this.#devboxes.set(request.devboxId, tracked);
    try {
      const existing = await this.#findTask(request.devboxId);
      if (existing !== undefined) return this.#placed(request.devboxId, tracked, existing);
      // A warm task of this spec, ready, becomes this DevBox: no RunTask, no clone, no setup.
      const warm = await this.#warm?.take(request, () => this.#claimOf(request));
      if (warm !== undefined) return this.#placed(request.devboxId, tracked, warm);
      const taskDefinition = await this.#taskDefinition(request.spec, request.repository);
      await this.#attempt(request, tracked, taskDefinition, 0);
    } catch (error) {
      // A start that failed leaves nothing behind, so that asking again tries again.
      if (this.#devboxes.get(request.devboxId) === tracked) this.#devboxes.delete(request.devboxId);
      throw error;
    }
  }

  /** The ARN of the task definition of `spec` for `repository` (registered on first use). */
  #taskDefinition(spec: DevBoxSpec, repository: string): Promise<string> {
    const networkMode = this.#options.subnets === undefined ? "bridge" : "awsvpc";
    const repositoryRef = (this.#options.repositoryOf ?? githubRepositoryOf)(repository);
    const definition = taskDefinitionInput(spec, repositoryRef, { ...this.#options, networkMode });
    return this.#definitions.ensure(definition);
  }

  /** What a warm task is handed for `request`: what a cold task's RunTask would carry. */
  #claimOf(request: StartRequest): WarmClaim {
    const env = taskEnvironment(this.#options, request);
    delete env[AGENT_ENV.token];
    return { devboxId: request.devboxId, token: request.token, env };
  }

  /**
   * Starts keeping warm tasks (`options.warm`), their identities issued by the hub at `hubUrl`,
   * after stopping the warm tasks whose hub is gone (see warm-orphans.ts). Resolves to the ARNs
   * of those it stopped.
   */
  async attachWarm(identities: WarmIdentities, hubUrl: string): Promise<string[]> {
    const warm = this.#options.warm;
    if (warm === undefined || warm.max === 0 || this.#warm !== undefined) return [];
    const port = {
      run: (spec: DevBoxSpec, template: WarmTemplate, identity: WarmIdentity) =>
        this.#runWarm(spec, template, identity),
      stop: (taskArn: string, reason: string) => this.#stopTask(taskArn, reason),
    };
    // The sweep first: it would take this executor's own new warm tasks for a dead process's.
    try {
      return await stopOrphanWarmTasks(this.#options.client, this.#options.cluster, hubUrl);
    } finally {
      this.#warm ??= new EcsWarmTasks(warm, port, identities);
    }
  }

  /** The warm tasks, once attached (tests and benchmarks). */
  get warm(): EcsWarmTasks | undefined {
    return this.#warm;
  }

  /** Stops every warm task; the DevBoxes' own tasks are left to their runs. */
  async stopWarm(): Promise<void> {
    await this.#warm?.close();
  }

  /** RunTask of one warm task; its ARN, or undefined when ECS placed none. */
  async #runWarm(
    spec: DevBoxSpec,
    template: WarmTemplate,
    identity: WarmIdentity,
  ): Promise<string | undefined> {
    // No secrets: a warm task holds nothing of any run (a spec with secrets is never warm).
    const taskDefinition = await this.#taskDefinition({ ...spec, secrets: [] }, template.repo);
    const input = warmRunTaskInput(this.#options, taskDefinition, { ...template, identity });
    const answer = await this.#options.client
      .send(new RunTaskCommand(input))
      .catch((error: unknown) => {
        throw toEcsError(error, "RunTask");
      });
    const arn = answer.tasks?.[0]?.taskArn;
    if (arn !== undefined) this.#watch();
    return arn;
  }

  /** One RunTask; on placement failures, schedules the next attempt or gives up. */
  async #attempt(
    request: StartRequest,
    tracked: Tracked,
    taskDefinition: string,
    attempt: number,
  ): Promise<void> {
    const { devboxId } = request;
    let answer;
    try {
      answer = await this.#options.client.send(
        new RunTaskCommand(runTaskInput(this.#options, request, taskDefinition, attempt)),
      );
    } catch (error) {
      const mapped = toEcsError(error, "RunTask");
      if (!mapped.retryable) throw mapped;
      answer = { tasks: [], failures: [{ reason: mapped.code, detail: mapped.message }] };
    }
    if (tracked.stopping) {
      const arn = answer.tasks?.[0]?.taskArn;
      if (arn !== undefined) await this.#stopTask(arn, "released while starting");
      return;
    }
    const task = answer.tasks?.[0];
    if (task?.taskArn !== undefined) return this.#placed(devboxId, tracked, task.taskArn);

    const reason =
      (answer.failures ?? [])
        .map((failure) => [failure.reason, failure.detail].filter(Boolean).join(" "))
        .join("; ") || "RunTask started no task";
    const attempts = this.#options.placement?.attempts ?? 8;
    if (attempt + 1 >= attempts) {
      this.#devboxes.delete(devboxId);
      const why = `no capacity after ${attempts} placement attempts: ${reason}`;
      this.#options.onStatus?.({ state: "placement-failed", devboxId, reason: why });
      this.#options.onLost?.(devboxId, why);
      return;
    }
    const base = this.#options.placement?.baseDelayMs ?? 2000;
    const retryInMs = Math.min(base * 2 ** attempt, this.#options.placement?.maxDelayMs ?? 60_000);
    this.#options.onStatus?.({
      state: "waiting-for-capacity",
      devboxId,
      reason,
      attempt: attempt + 1,
      retryInMs,
    });
    tracked.retry = setTimeout(() => {
      delete tracked.retry;
      this.#attempt(request, tracked, taskDefinition, attempt + 1).catch((error: unknown) => {
        this.#devboxes.delete(devboxId);
        const why = error instanceof Error ? error.message : String(error);
        this.#options.onStatus?.({ state: "placement-failed", devboxId, reason: why });
        this.#options.onLost?.(devboxId, why);
      });
    }, retryInMs);
    tracked.retry.unref();
  }

  #placed(devboxId: string, tracked: Tracked, taskArn: string): void {
    tracked.taskArn = taskArn;
    this.#options.onStatus?.({ state: "started", devboxId, taskArn });
    this.#watch();
  }

  /** Stops the DevBox's task (found by `startedBy` when another process started it). */
  async stop(devboxId: string): Promise<void> {
    const tracked = this.#devboxes.get(devboxId) ?? { stopping: true };
    tracked.stopping = true;
    clearTimeout(tracked.retry);
    await this.#starting.settled(devboxId);
    const taskArn = tracked.taskArn ?? (await this.#findTask(devboxId));
    this.#devboxes.delete(devboxId);
    if (taskArn !== undefined) await this.#stopTask(taskArn, "released by clustercode");
  }

  /** Stops watching (the tasks keep running); call when the process shuts down. */
  close(): void {
    clearInterval(this.#poller);
    this.#poller = undefined;
    for (const tracked of this.#devboxes.values()) clearTimeout(tracked.retry);
  }

  /** Checks every started task once; the timer calls it, tests may too. */
  async poll(): Promise<void> {
    if (this.#polling) return;
    this.#polling = true;
    try {
      const byArn = new Map<string, string>();
      for (const [devboxId, tracked] of this.#devboxes) {
        if (tracked.taskArn !== undefined && !tracked.stopping)
          byArn.set(tracked.taskArn, devboxId);
      }
      const arns = [...byArn.keys(), ...(this.#warm?.taskArns ?? [])];
      for (let at = 0; at < arns.length; at += 100) {
        const batch = arns.slice(at, at + 100);
        const answer = await this.#options.client
          .send(new DescribeTasksCommand({ cluster: this.#options.cluster, tasks: batch }))
          .catch((error: unknown) => {
            throw toEcsError(error, "DescribeTasks");
          });
        for (const task of answer.tasks ?? []) {
          if (task.lastStatus !== "STOPPED" || task.taskArn === undefined) continue;
          if (!byArn.has(task.taskArn)) this.#warm?.stopped(task.taskArn);
          const why = [task.stopCode, task.stoppedReason].filter(Boolean).join(": ");
          this.#lost(byArn.get(task.taskArn), task.taskArn, why || "the task stopped");
        }
        for (const failure of answer.failures ?? []) {
          if (failure.arn === undefined || failure.reason !== "MISSING") continue;
          if (!byArn.has(failure.arn)) this.#warm?.stopped(failure.arn);
          this.#lost(byArn.get(failure.arn), failure.arn, "the task is gone (MISSING)");
        }
      }
    } finally {
      this.#polling = false;
      const watching = [...this.#devboxes.values()].some(
        (tracked) => tracked.taskArn !== undefined,
      );
      if (!watching && (this.#warm?.taskArns.length ?? 0) === 0) {
        clearInterval(this.#poller);
        this.#poller = undefined;
      }
    }
  }

  #lost(devboxId: string | undefined, taskArn: string, reason: string): void {
    if (devboxId === undefined || this.#devboxes.get(devboxId)?.stopping !== false) return;
    this.#devboxes.delete(devboxId);
    this.#options.onStatus?.({ state: "stopped", devboxId, taskArn, reason });
    this.#options.onLost?.(devboxId, reason);
  }

  #watch(): void {
    if (this.#poller !== undefined) return;
    this.#poller = setInterval(() => {
      this.poll().catch((error: unknown) => {
        // A failed check is tried again at the next tick; say so where the operator looks.
        const message = error instanceof Error ? error.message : String(error);
        process.stderr.write(`clustercode ecs: ${message}\n`);
      });
    }, this.#options.pollIntervalMs ?? 10_000);
    this.#poller.unref();
  }

  async #findTask(devboxId: string): Promise<string | undefined> {
    try {
      const answer = await this.#options.client.send(
        new ListTasksCommand({ cluster: this.#options.cluster, startedBy: startedByOf(devboxId) }),
      );
      return answer.taskArns?.[0];
    } catch (error) {
      throw toEcsError(error, "ListTasks");
    }
  }

  async #stopTask(taskArn: string, reason: string): Promise<void> {
    try {
      await this.#options.client.send(
        new StopTaskCommand({ cluster: this.#options.cluster, task: taskArn, reason }),
      );
    } catch (error) {
      const mapped = toEcsError(error, "StopTask");
      // A task ECS no longer knows is as stopped as it gets.
      if (mapped.code !== "not_found" && mapped.code !== "invalid_request") throw mapped;
    }
  }
}
