import { randomBytes } from "node:crypto";
import { mkdir, rename, rm } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { StartRequest } from "../executor.js";
import { WARM_MARKER_FILE, warmMarkerText } from "../warm-marker.js";
import { writeFileInside } from "./no-follow.js";
import { templateOf, warmKey, type WarmTemplate } from "../warm-key.js";
import {
  cloneWarm,
  niceGit,
  removeLeftWarmDirs,
  type WarmGit,
  type WarmSource,
} from "./warm-clone.js";
import type { LocalDevBoxPaths } from "./devbox-paths.js";

export type { WarmSource } from "./warm-clone.js";

/** How a {@link WarmPool} is set up. */
export interface WarmPoolOptions {
  /** Warm DevBoxes live in `<stateDir>/warm/<warmId>/` until claimed. */
  stateDir: string;
  /** The most warm DevBoxes (ready or being made ready) over every repository. */
  max: number;
  source: WarmSource;
  /** PATH, HOME and LANG for git. */
  env: Record<string, string>;
  /** The paths of a DevBox directory (the executor's layout). */
  paths: (dir: string) => LocalDevBoxPaths;
  /**
   * Runs the setup in the warm checkout, sandboxed and without the hub, with the mirror its
   * checkout borrows objects from; true when it passed.
   */
  setUp: (
    paths: LocalDevBoxPaths,
    setup: readonly string[],
    mirror: string,
    signal: AbortSignal,
  ) => Promise<boolean>;
  /** A warm DevBox that could not be made ready (the pool tries again at the next claim). */
  onError?: (error: unknown) => void;
  /** How long after a claim that took a warm DevBox the pool starts refilling; default 2 s. */
  refillDelayMs?: number;
  /** A pool nobody claimed from for this long is let go; default one hour. */
  idleMs?: number;
  now?: () => number;
}

/** One warm DevBox: its directory and the commit of the default branch it is at. */
interface WarmEntry {
  dir: string;
  sha: string;
}

/** The warm DevBoxes of one (repository, default branch, spec). */
interface Pool {
  template: WarmTemplate;
  ready: WarmEntry[];
  making: number;
  lastClaim: number;
  /** Bumped when the default branch moved: DevBoxes made for an older one are discarded. */
  generation: number;
  /**
   * Asked for by the default branch's workflows (see {@link WarmPool.declare}): its count is
   * theirs, not a claim's (a run pinned to an older workflow), and it is kept while idle.
   */
  declared: boolean;
}

/**
 * Keeps DevBoxes cloned at the head of a repository's default branch and set up, per
 * (repository, spec), so that a claim takes one instead of cloning. A warm DevBox holds no
 * token and no secret (it is made before any run claims it); it is handed to exactly one claim
 * (its directory moves out of the pool) and never comes back.
 */
export class WarmPool {
  readonly #options: WarmPoolOptions;
  readonly #pools = new Map<string, Pool>();
  readonly #life = new AbortController();
  readonly #work = new Set<Promise<void>>();
  readonly #git: WarmGit;

  constructor(options: WarmPoolOptions) {
    this.#options = options;
    this.#git = niceGit(options.env, this.#life.signal);
    this.#track(removeLeftWarmDirs(this.#root));
  }

  /**
   * Hands the claim `request` a warm DevBox by moving its directory to `dir`; false when none is
   * ready (the claim clones as before). Either way, the pool of its spec is refilled in the
   * background and checked against the default branch's head.
   */
  async claim(request: StartRequest, dir: string): Promise<boolean> {
    const template = templateOf(request);
    if (template === undefined || this.#life.signal.aborted) return false;
    const pool = this.#poolOf(template);
    // No warm wanted and none kept: the claim goes on exactly as without a pool.
    if (pool === undefined) return false;
    pool.lastClaim = this.#now();
    let entry = pool.ready.shift();
    if (entry !== undefined) {
      // Should the move fail, the claim clones as without a pool. The first DevBox of a host
      // may be a warm one: the directory it moves into may not exist yet.
      const from = entry.dir;
      const moved = await mkdir(dirname(dir), { recursive: true })
        .then(() => rename(from, dir))
        .then(
          () => true,
          () => false,
        );
      if (!moved) this.#remove(entry.dir);
      if (!moved) entry = undefined;
    }
    this.#letIdleGo();
    // Cloning and setting up the next one would slow the start of this one: it waits a little.
    const delay = entry === undefined ? 0 : (this.#options.refillDelayMs ?? 2000);
    this.#track(
      sleep(delay, undefined, { signal: this.#life.signal }).then(async () => {
        this.#refill();
        if (entry !== undefined) await this.#checkHead(pool, entry.sha);
      }),
    );
    return entry !== undefined;
  }

  /**
   * Makes the pools of `repo` exactly those `specs` ask for (its default branch's workflows,
   * read before any claim): each fills at once, and a pool of `repo` no spec asks for any more
   * (its workflow dropped `warm`) lets its DevBoxes go.
   */
  declare(repo: string, specs: readonly WarmTemplate[]): void {
    if (this.#life.signal.aborted) return;
    const counts = new Map<string, number>();
    for (const spec of specs) {
      if (spec.repo !== repo || spec.count === 0) continue;
      // Shapes the engine tells apart may share a pool here (see warmKey): the larger count.
      const key = warmKey(spec);
      const count = Math.max(counts.get(key) ?? 0, spec.count);
      counts.set(key, count);
      const pool = this.#poolOf({ ...spec, count }, true);
      if (pool !== undefined) pool.declared = true;
    }
    for (const [key, pool] of this.#pools) {
      if (pool.template.repo !== repo || counts.has(key)) continue;
      pool.declared = false;
      pool.template = { ...pool.template, count: 0 };
    }
    this.#refill();
  }

  /** Discards the warm DevBoxes of `repo` (its default branch moved) and makes new ones. */
  baseMoved(repo: string): void {
    for (const pool of this.#pools.values()) {
      if (pool.template.repo === repo) this.#discard(pool);
    }
    this.#refill();
  }

  /** How many warm DevBoxes are ready, over every repository. */
  get ready(): number {
    return [...this.#pools.values()].reduce((sum, pool) => sum + pool.ready.length, 0);
  }

  /** Resolves once no warm DevBox is being made (for tests and benchmarks). */
  async settled(): Promise<void> {
    while (this.#work.size > 0) await Promise.allSettled([...this.#work]);
  }

  /** Stops making warm DevBoxes (killing clones and setups under way) and removes them all. */
  async close(): Promise<void> {
    this.#life.abort();
    await this.settled();
    for (const pool of this.#pools.values()) this.#discard(pool);
    await this.settled();
  }

  get #root(): string {
    return join(this.#options.stateDir, "warm");
  }

  /** The pool of `template`, updated to it; undefined when there is none and none is wanted. */
  #poolOf(template: WarmTemplate, declaring = false): Pool | undefined {
    const key = warmKey(template);
    const known = this.#pools.get(key);
    if (known === undefined && template.count === 0) return undefined;
    if (known === undefined) {
      const pool = { template, ready: [], making: 0, lastClaim: this.#now(), generation: 0 };
      this.#pools.set(key, { ...pool, declared: false });
      return this.#pools.get(key);
    }
    const branch = template.branch === "" ? known.template.branch : template.branch;
    if (branch !== known.template.branch) this.#discard(known);
    const count = known.declared && !declaring ? known.template.count : template.count;
    known.template = { ...template, branch, count };
    return known;
  }

  /** Starts making warm DevBoxes where a pool is short, within the host's cap. */
  #refill(): void {
    if (this.#life.signal.aborted) return;
    let total = [...this.#pools.values()].reduce(
      (n, pool) => n + pool.ready.length + pool.making,
      0,
    );
    for (const pool of this.#pools.values()) {
      while (pool.ready.length + pool.making < pool.template.count && total < this.#options.max) {
        pool.making++;
        total++;
        this.#track(this.#make(pool));
      }
      // Fewer wanted now (warm lowered, or 0): the extra ready ones go.
      for (const entry of pool.ready.splice(pool.template.count)) this.#remove(entry.dir);
    }
  }

  /** Makes one warm DevBox for `pool`, or nothing when it fails or is no longer wanted. */
  async #make(pool: Pool): Promise<void> {
    const generation = pool.generation;
    // Named by this process, so that another one sharing the state directory can tell it is ours.
    const dir = join(this.#root, `w${process.pid}-${randomBytes(6).toString("hex")}`);
    let made: WarmEntry | undefined;
    try {
      made = await this.#prepare(pool.template, dir);
    } catch (error) {
      if (!this.#life.signal.aborted) this.#options.onError?.(error);
    } finally {
      pool.making--;
    }
    const wanted = pool.ready.length < pool.template.count && generation === pool.generation;
    if (made !== undefined && wanted && !this.#life.signal.aborted) {
      pool.ready.push(made);
      return;
    }
    this.#remove(dir);
    // Made for a default branch that has moved since: one at the new head takes its place.
    if (made !== undefined) this.#refill();
  }

  /** Clones the default branch into `dir`'s checkout (through the mirror) and sets it up. */
  async #prepare(template: WarmTemplate, dir: string): Promise<WarmEntry | undefined> {
    const paths = this.#options.paths(dir);
    // As a claimed DevBox's: a DevBox uid (the app as root) must pass through it to its checkout.
    await mkdir(paths.dir, { recursive: true, mode: 0o755 });
    await mkdir(paths.tmp, { recursive: true, mode: 0o700 });
    await mkdir(paths.home, { recursive: true, mode: 0o700 });
    const { stateDir, source, env } = this.#options;
    const { mirror, sha } = await cloneWarm(template, paths, {
      stateDir,
      source,
      env,
      git: this.#git,
    });
    const ok = await this.#options.setUp(paths, template.setup, mirror, this.#life.signal);
    // A setup that failed here (no network before the claim, say) runs again at the claim.
    // The setup may have left a link in the marker's place (or for `.git`): never written through.
    if (ok) {
      const marker = warmMarkerText({ sha, setup: template.setup });
      const at = `${relative(paths.dir, paths.checkout)}/.git/${WARM_MARKER_FILE}`;
      await writeFileInside(paths.dir, at, marker, 0o644);
    }
    await rm(paths.tmp, { recursive: true, force: true });
    return this.#life.signal.aborted ? undefined : { dir, sha };
  }

  /** Discards `pool`'s warm DevBoxes when the default branch's head is no longer `sha`. */
  async #checkHead(pool: Pool, sha: string): Promise<void> {
    const { url, env } = await this.#options.source(pool.template.repo);
    const ref = `refs/heads/${pool.template.branch}`;
    const head = (
      await this.#git(["ls-remote", "--", url, ref], this.#options.stateDir, env)
    ).split(/\s/)[0];
    if (head === undefined || head === "" || head === sha) return;
    this.#discard(pool, (entry) => entry.sha === head);
    this.#refill();
  }

  /** Discards `pool`'s ready DevBoxes but those `keep` says are current, and any being made. */
  #discard(pool: Pool, keep: (entry: WarmEntry) => boolean = () => false): void {
    pool.generation++;
    const kept = pool.ready.filter(keep);
    for (const entry of pool.ready.filter((entry) => !keep(entry))) this.#remove(entry.dir);
    pool.ready = kept;
  }

  /** Lets go of the pools nobody claimed from for the idle time (a changed spec's old pool). */
  #letIdleGo(): void {
    const idleMs = this.#options.idleMs ?? 3_600_000;
    for (const [key, pool] of this.#pools) {
      if (pool.declared || this.#now() - pool.lastClaim <= idleMs) continue;
      this.#discard(pool);
      if (pool.making === 0) this.#pools.delete(key);
      else pool.template = { ...pool.template, count: 0 };
    }
  }

  #remove(dir: string): void {
    this.#track(rm(dir, { recursive: true, force: true }));
  }

  #track(work: Promise<void>): void {
    const tracked = work
      .catch((error: unknown) => {
        if (!this.#life.signal.aborted) this.#options.onError?.(error);
      })
      .finally(() => this.#work.delete(tracked));
    this.#work.add(tracked);
  }

  #now(): number {
    return (this.#options.now ?? Date.now)();
  }
}
