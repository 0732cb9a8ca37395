import { randomBytes } from "node:crypto";
import { mkdir, readdir, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { StartRequest } from "../executor.js";
import { OutputTail } from "../output-tail.js";
import { runProcess } from "../process-runner.js";
import { writeWarmMarker } from "../warm-marker.js";
import { templateOf, warmKey, type WarmTemplate } from "../warm-key.js";
import type { LocalDevBoxPaths } from "./devbox-paths.js";
import { isAlive } from "./process-info.js";
import { nice } from "./warm-setup.js";

/** Where a repository is cloned from before any run claims it, and git's credentials for it. */
export type WarmSource = (repo: string) => Promise<{ url: string; env: Record<string, string> }>;

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
  /** Runs the setup in the warm checkout, sandboxed and without the hub; true when it passed. */
  setUp: (
    paths: LocalDevBoxPaths,
    setup: readonly string[],
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

  constructor(options: WarmPoolOptions) {
    this.#options = options;
    this.#track(this.#sweep());
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
      // Should the move fail, the claim clones as without a pool.
      const moved = await rename(entry.dir, dir).then(
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

  /** Removes the warm DevBoxes a process that is gone left in the state directory. */
  async #sweep(): Promise<void> {
    let names: string[];
    try {
      names = await readdir(this.#root);
    } catch {
      return;
    }
    for (const name of names) {
      const pid = Number(/^w(\d+)-/.exec(name)?.[1]);
      if (Number.isInteger(pid) && pid !== process.pid && !(await isAlive(pid)))
        await rm(join(this.#root, name), { recursive: true, force: true });
    }
  }

  get #root(): string {
    return join(this.#options.stateDir, "warm");
  }

  /** The pool of `template`, updated to it; undefined when there is none and none is wanted. */
  #poolOf(template: WarmTemplate): Pool | undefined {
    const key = warmKey(template);
    const known = this.#pools.get(key);
    if (known === undefined && template.count === 0) return undefined;
    if (known === undefined) {
      const pool = { template, ready: [], making: 0, lastClaim: this.#now(), generation: 0 };
      this.#pools.set(key, pool);
      return pool;
    }
    const branch = template.branch === "" ? known.template.branch : template.branch;
    if (branch !== known.template.branch) this.#discard(known);
    known.template = { ...template, branch };
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

  /** Clones the default branch into `dir`'s checkout and runs the setup there. */
  async #prepare(template: WarmTemplate, dir: string): Promise<WarmEntry | undefined> {
    const paths = this.#options.paths(dir);
    await mkdir(paths.tmp, { recursive: true, mode: 0o700 });
    await mkdir(paths.home, { recursive: true, mode: 0o700 });
    const { url, env } = await this.#options.source(template.repo);
    const clone = ["clone", "--quiet", "--single-branch", "--branch", template.branch];
    await this.#git([...clone, "--", url, paths.checkout], dir, env);
    // Credentials in the URL must not stay in the checkout; the claim points origin at its hub.
    await this.#git(["remote", "set-url", "origin", "warm:unclaimed"], paths.checkout, {});
    // Fetched as a full clone would be: the claim may need any branch, not just this one.
    const refspec = "+refs/heads/*:refs/remotes/origin/*";
    await this.#git(["config", "remote.origin.fetch", refspec], paths.checkout, {});
    const sha = (await this.#git(["rev-parse", "HEAD"], paths.checkout, {})).trim();
    const ok = await this.#options.setUp(paths, template.setup, this.#life.signal);
    // A setup that failed here (no network before the claim, say) runs again at the claim.
    if (ok) await writeWarmMarker(join(paths.checkout, ".git"), { sha, setup: template.setup });
    await rm(paths.tmp, { recursive: true, force: true });
    return this.#life.signal.aborted ? undefined : { dir, sha };
  }

  /** Runs git (never through a shell); throws with its output when it fails. */
  async #git(args: string[], cwd: string, auth: Record<string, string>): Promise<string> {
    const output = new OutputTail(8 * 1024);
    const stdout = new OutputTail(8 * 1024);
    const { exitCode } = await runProcess({
      file: "git",
      args,
      cwd,
      env: { ...this.#options.env, ...auth, GIT_TERMINAL_PROMPT: "0" },
      signal: this.#life.signal,
      output,
      stdout,
      wrap: nice,
    });
    if (exitCode !== 0) throw new Error(`git ${args[0]} failed (${exitCode}) for a warm DevBox`);
    return stdout.text();
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
      if (this.#now() - pool.lastClaim <= idleMs) continue;
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
