import { setTimeout as sleep } from "node:timers/promises";
import type { DevBoxSpec } from "../../engine/commands.js";
import type { DefaultBranchMoves } from "../branch-moves.js";
import type { WarmDemand, WarmSpec } from "../warm-demand.js";
import type { StartRequest } from "../executor.js";
import { templateOf, warmKey, type WarmTemplate } from "../warm-key.js";
import type { WarmClaim, WarmIdentities, WarmIdentity } from "../warm-protocol.js";

/** How the ECS executor keeps warm tasks (`devbox.warm`). */
export interface EcsWarmOptions {
  /** The most warm tasks (ready or starting) this executor keeps over every repository. */
  max: number;
  /** Pushes to default branches: the repository's warm tasks are stopped and started anew. */
  moves?: DefaultBranchMoves;
  /** What the default branches' workflows ask for: their pools fill before the first claim. */
  demand?: WarmDemand;
  /** How long a ready task has to take its claim before the claim starts cold; default 10 s. */
  handoverMs?: number;
  /** A pool nobody claimed from for this long is let go; default one hour. */
  idleMs?: number;
  /**
   * How long after a claim that took a warm task the pool starts another; default 2 s, so that
   * its clone and setup (binpack puts it beside the claimed task) do not slow that one's start.
   */
  refillDelayMs?: number;
  /** A warm task that could not be started or stopped (the next claim tries again). */
  onError?: (error: unknown) => void;
  now?: () => number;
}

/** What the pool asks of the executor: to start and stop warm tasks. */
export interface WarmTaskPort {
  /** RunTask of a warm task for `spec` with `identity`; its ARN, or undefined when not placed. */
  run(
    spec: DevBoxSpec,
    template: WarmTemplate,
    identity: WarmIdentity,
  ): Promise<string | undefined>;
  stop(taskArn: string, reason: string): Promise<void>;
}

const GITHUB_REPO = /^[A-Za-z0-9-]+\/[A-Za-z0-9._-]+$/;

/** One warm task: its identity, and its ARN once ECS placed it. */
interface WarmTask {
  warmId: string;
  taskArn?: string;
}

/** The warm tasks of one (repository, spec). */
interface Pool {
  template: WarmTemplate;
  /** The spec of the last claim, whose task definition the warm tasks use. */
  spec: DevBoxSpec;
  tasks: WarmTask[];
  lastClaim: number;
  /** Asked for by the default branch's workflows: kept while idle, as the local pool does. */
  declared?: boolean;
}

/**
 * Warm ECS tasks per (repository, spec): started ahead with a single-use warm identity and no
 * DevBox token or secret, cloned at the default branch and set up; a claim is handed to one that
 * is ready instead of a RunTask. A spec with secrets is never kept warm: its secrets come from
 * Secrets Manager into the task's environment when it starts, before any claim.
 */
export class EcsWarmTasks {
  readonly #options: EcsWarmOptions;
  readonly #port: WarmTaskPort;
  readonly #identities: WarmIdentities;
  readonly #pools = new Map<string, Pool>();
  readonly #work = new Set<Promise<void>>();
  readonly #life = new AbortController();

  constructor(options: EcsWarmOptions, port: WarmTaskPort, identities: WarmIdentities) {
    this.#options = options;
    this.#port = port;
    this.#identities = identities;
    options.moves?.listen((repo) => this.baseMoved(repo));
    options.demand?.listen((repo, specs) => this.declare(repo, specs));
  }

  /**
   * Keeps the warm tasks `specs` ask for (read from `repo`'s default branch) before any claim,
   * and stops the pools of `repo` its workflows no longer ask for. Until a claim brings its own
   * spec, a declared pool's tasks use the spec the declaration implies.
   */
  declare(repo: string, specs: readonly WarmSpec[]): void {
    if (this.#life.signal.aborted) return;
    const wanted = new Set<string>();
    if (GITHUB_REPO.test(repo)) {
      for (const spec of specs) {
        if (spec.repo !== repo || spec.count === 0) continue;
        const key = warmKey(spec);
        const known = this.#pools.get(key);
        // Shapes the engine tells apart may share a pool (see warmKey): the larger count.
        const count = Math.max(wanted.has(key) ? (known?.template.count ?? 0) : 0, spec.count);
        wanted.add(key);
        const pool = this.#poolOf({ ...spec, count }, known?.spec ?? declaredSpec(spec));
        if (pool !== undefined) pool.declared = true;
      }
    }
    for (const [key, pool] of this.#pools) {
      if (pool.template.repo !== repo || wanted.has(key)) continue;
      pool.declared = false;
      pool.template = { ...pool.template, count: 0 };
    }
    this.#refill();
  }

  /**
   * Hands the claim of `request` to a ready warm task of its spec and returns that task's ARN;
   * undefined when none took it (the claim starts cold). Either way, the pool is refilled.
   */
  async take(request: StartRequest, claim: () => WarmClaim): Promise<string | undefined> {
    const template = templateOf(request);
    // Only a GitHub repository has a route on the hub for a warm task to fetch it from.
    if (template === undefined || !GITHUB_REPO.test(template.repo) || this.#life.signal.aborted) {
      return undefined;
    }
    const pool = this.#poolOf(template, request.spec);
    if (pool === undefined) return undefined;
    pool.lastClaim = this.#now();
    let handed: string | undefined;
    for (;;) {
      const task = pool.tasks.find(
        (each) => each.taskArn !== undefined && this.#identities.isReady(each.warmId),
      );
      if (task === undefined) break;
      // Out of the pool before the offer: no other claim can be offered the same task.
      pool.tasks = pool.tasks.filter((each) => each !== task);
      const taken = await this.#identities.offer(task.warmId, claim(), this.#handoverMs);
      if (taken) {
        handed = task.taskArn;
        break;
      }
      this.#stop(task, "the warm task did not take its claim");
    }
    this.#letIdleGo();
    const delay = handed === undefined ? 0 : (this.#options.refillDelayMs ?? 2000);
    if (delay === 0) this.#refill();
    else
      this.#track(
        sleep(delay, undefined, { signal: this.#life.signal }).then(() => this.#refill()),
      );
    return handed;
  }

  /** Stops the warm tasks of `repo` (its default branch moved) and starts new ones. */
  baseMoved(repo: string): void {
    for (const pool of this.#pools.values()) {
      if (pool.template.repo !== repo) continue;
      for (const task of pool.tasks.splice(0)) this.#stop(task, "the default branch moved");
    }
    this.#refill();
  }

  /** The ARNs of the warm tasks placed (the executor watches them). */
  get taskArns(): string[] {
    return [...this.#pools.values()].flatMap((pool) =>
      pool.tasks.flatMap((task) => (task.taskArn === undefined ? [] : [task.taskArn])),
    );
  }

  /** How many warm tasks are ready for a claim, over every repository. */
  get ready(): number {
    return [...this.#pools.values()].reduce(
      (sum, pool) =>
        sum + pool.tasks.filter((task) => this.#identities.isReady(task.warmId)).length,
      0,
    );
  }

  /** A warm task stopped on its own (crash, spot): it leaves the pool, another is started. */
  stopped(taskArn: string): void {
    for (const pool of this.#pools.values()) {
      const task = pool.tasks.find((each) => each.taskArn === taskArn);
      if (task === undefined) continue;
      pool.tasks = pool.tasks.filter((each) => each !== task);
      this.#identities.revoke(task.warmId);
    }
    this.#refill();
  }

  /** Resolves once no warm task is being started or stopped (tests). */
  async settled(): Promise<void> {
    while (this.#work.size > 0) await Promise.allSettled([...this.#work]);
  }

  /** Stops every warm task and starts no more (the app is closing). */
  async close(): Promise<void> {
    this.#life.abort();
    await this.settled();
    for (const pool of this.#pools.values()) {
      for (const task of pool.tasks.splice(0)) this.#stop(task, "clustercode closed");
    }
    await this.settled();
  }

  /** The pool of `template`, updated to it; undefined when there is none and none is wanted. */
  #poolOf(template: WarmTemplate, spec: DevBoxSpec): Pool | undefined {
    const key = warmKey(template);
    const known = this.#pools.get(key);
    const count = template.secrets.length > 0 ? 0 : template.count;
    if (known === undefined && count === 0) return undefined;
    if (known === undefined) {
      const pool = { template: { ...template, count }, spec, tasks: [], lastClaim: this.#now() };
      this.#pools.set(key, pool);
      return pool;
    }
    const branch = template.branch === "" ? known.template.branch : template.branch;
    if (branch !== known.template.branch) {
      for (const task of known.tasks.splice(0)) this.#stop(task, "the default branch changed");
    }
    known.template = { ...template, branch, count };
    known.spec = spec;
    return known;
  }

  /** Starts warm tasks where a pool is short, within the cap; stops the extra ones. */
  #refill(): void {
    if (this.#life.signal.aborted) return;
    let total = [...this.#pools.values()].reduce((n, pool) => n + pool.tasks.length, 0);
    for (const pool of this.#pools.values()) {
      while (pool.tasks.length < pool.template.count && total < this.#options.max) {
        total++;
        const identity = this.#identities.issue(pool.template.repo, pool.template.branch);
        const task: WarmTask = { warmId: identity.warmId };
        pool.tasks.push(task);
        this.#track(this.#launch(pool, task, identity));
      }
      for (const task of pool.tasks.splice(pool.template.count)) this.#stop(task, "fewer wanted");
    }
  }

  /** RunTask of one warm task; a task not placed leaves the pool (the next claim tries again). */
  async #launch(pool: Pool, task: WarmTask, identity: WarmIdentity): Promise<void> {
    let arn: string | undefined;
    try {
      arn = await this.#port.run(pool.spec, pool.template, identity);
    } finally {
      if (arn === undefined) {
        pool.tasks = pool.tasks.filter((each) => each !== task);
        this.#identities.revoke(task.warmId);
      }
    }
    if (arn === undefined) return;
    task.taskArn = arn;
    // Let go of while ECS placed it (the pool shrank, the branch moved, the app closes).
    if (!pool.tasks.includes(task) || this.#life.signal.aborted)
      this.#stop(task, "no longer wanted");
  }

  #stop(task: WarmTask, reason: string): void {
    this.#identities.revoke(task.warmId);
    // A task still being placed is stopped by its launch, which sees it left the pool.
    if (task.taskArn !== undefined) this.#track(this.#port.stop(task.taskArn, reason));
  }

  /** Lets go of the pools nobody claimed from for the idle time (a changed spec's old pool). */
  #letIdleGo(): void {
    const idleMs = this.#options.idleMs ?? 3_600_000;
    for (const [key, pool] of this.#pools) {
      if (pool.declared === true || this.#now() - pool.lastClaim <= idleMs) continue;
      for (const task of pool.tasks.splice(0)) this.#stop(task, "the pool went idle");
      this.#pools.delete(key);
    }
  }

  #track(work: Promise<void>): void {
    const tracked = work
      .catch((error: unknown) => {
        // Closing cuts a refill's wait short: not an error.
        const cut = error instanceof Error && error.name === "AbortError";
        if (!cut) this.#options.onError?.(error);
      })
      .finally(() => this.#work.delete(tracked));
    this.#work.add(tracked);
  }

  get #handoverMs(): number {
    return this.#options.handoverMs ?? 10_000;
  }

  #now(): number {
    return (this.#options.now ?? Date.now)();
  }
}

/** The DevBox spec a declared warm spec implies, for its tasks' definition before any claim. */
function declaredSpec(spec: WarmSpec): DevBoxSpec {
  return {
    branch: spec.branch,
    baseBranch: spec.branch,
    setup: spec.setup,
    secrets: spec.secrets,
    warm: { count: spec.count, branch: spec.branch },
    ...(spec.image === undefined ? {} : { image: spec.image }),
    ...(spec.cpu === undefined ? {} : { cpu: spec.cpu }),
    ...(spec.memoryMiB === undefined ? {} : { memoryMiB: spec.memoryMiB }),
    ...(spec.networkAllow === undefined ? {} : { networkAllow: spec.networkAllow }),
  };
}
