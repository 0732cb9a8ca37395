/**
 * Warm DevBoxes on the local executor: a real hub, the built agent (`dist/cli/main.js`) and a
 * real git repository. A warm DevBox is cloned at the default branch's head and set up before
 * any claim; a claim takes it instead of cloning.
 */
import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  writeFileSync,
} from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { DevBoxSpec } from "../../../src/engine/commands.js";
import type { DevBoxEvent } from "../../../src/devbox/hub/events.js";
import { DevBoxHub } from "../../../src/devbox/hub/hub.js";
import { LocalExecutor } from "../../../src/devbox/local/executor.js";
import { DefaultBranchMoves } from "../../../src/devbox/branch-moves.js";
import { repoMirrorPath } from "../../../src/devbox/local/mirror.js";
import { WarmDemand, warmSpecsOf } from "../../../src/devbox/warm-demand.js";
import { WARM_MARKER_FILE } from "../../../src/devbox/warm-marker.js";
import { parseWorkflow } from "../../../src/workflow/parse.js";

const root = realpathSync(mkdtempSync(join(tmpdir(), "clustercode-warm-test-")));
const source = join(root, "source");
const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, { cwd, encoding: "utf8" }).trim();
const commit = (file: string, text: string) => {
  writeFileSync(join(source, file), text);
  git(source, "add", file);
  git(source, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", file);
  return git(source, "rev-parse", "HEAD");
};

beforeAll(() => {
  git(root, "init", "--quiet", "--initial-branch=main", source);
  commit("README.md", "# demo\n");
});
afterAll(() => rm(root, { recursive: true, force: true }));

/** Counts its runs in the checkout: a claimed warm DevBox must not run it again. */
const SETUP = ["echo ran >> .setup-runs"];

/** One test's world: a hub and an executor keeping at most `max` warm DevBoxes. */
class World {
  readonly events: DevBoxEvent[] = [];
  readonly stateDir = mkdtempSync(join(root, "state-"));
  readonly hub = new DevBoxHub({ onEvent: (event) => this.events.push(event), lapseMs: 3000 });
  readonly sourced: string[] = [];
  readonly moves = new DefaultBranchMoves();
  readonly demand = new WarmDemand();
  readonly executor: LocalExecutor;

  /** `sourceEnv`: git's environment for the source (credentials, in the app); `sandboxed`: bwrap. */
  constructor(
    max: number,
    options: { sourceEnv?: Record<string, string>; sandboxed?: boolean } = {},
  ) {
    this.executor = new LocalExecutor({
      stateDir: this.stateDir,
      graceMs: 2000,
      // The pids and checkouts are watched from the host; the walls are tested elsewhere (and
      // in the one test here that needs them).
      sandbox: { unsafe: options.sandboxed !== true },
      env: {
        ...process.env,
        CLUSTERCODE_DEVBOX_HEARTBEAT_MS: "200",
        CLUSTERCODE_DEVBOX_LAPSE_MS: "3000",
      },
      warm: {
        max,
        moves: this.moves,
        demand: this.demand,
        source: (repo) => {
          this.sourced.push(repo);
          return Promise.resolve({ url: repo, env: options.sourceEnv ?? {} });
        },
      },
    });
  }

  /** Says, as the app does on reading the default branch, what `devbox` block its workflow has. */
  declare(devbox: string) {
    const parsed = parseWorkflow(`version: 1
name: t
on: { label: go }
${devbox}
nodes:
  build: { kind: run, run: make }
`);
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.findings));
    this.demand.declare(source, warmSpecsOf(source, "main", [parsed.workflow]));
  }

  get pool() {
    const pool = this.executor.warm;
    if (pool === undefined) throw new Error("no warm pool");
    return pool;
  }

  /** The directories of the warm DevBoxes waiting now. */
  warmDirs(): string[] {
    const dir = join(this.stateDir, "warm");
    return existsSync(dir) ? readdirSync(dir).map((name) => join(dir, name)) : [];
  }

  /** Claims DevBox `devboxId` (warm `count` when given) and waits until it is ready. */
  async claim(devboxId: string, count?: number, spec: Partial<DevBoxSpec> = {}) {
    const apiUrl = await this.hub.listen();
    const { token } = this.hub.register({ devboxId, runId: `run-${devboxId}` });
    await this.executor.start({
      devboxId,
      runId: `run-${devboxId}`,
      apiUrl,
      token,
      repository: source,
      repo: source,
      spec: {
        branch: `clustercode/${devboxId}`,
        baseBranch: "main",
        setup: SETUP,
        secrets: [],
        ...(count === undefined ? {} : { warm: { count, branch: "main" } }),
        ...spec,
      },
    });
    const ready = await this.waitFor((e) => e.type === "devbox.ready" && e.devboxId === devboxId);
    return { token, ready };
  }

  checkout(devboxId: string): string {
    return this.executor.paths(devboxId).checkout;
  }

  setupRuns(devboxId: string): number {
    return (
      readFileSync(join(this.checkout(devboxId), ".setup-runs"), "utf8").split("\n").length - 1
    );
  }

  async waitFor(predicate: (event: DevBoxEvent) => boolean, timeoutMs = 15_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.events.find(predicate);
      if (found !== undefined) return found;
      if (Date.now() > deadline) throw new Error(`no such event in ${JSON.stringify(this.events)}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async dispose() {
    await this.executor.stopAll();
    await this.hub.close();
  }
}

/** Leaves a file in each warm DevBox's git directory, to tell later which checkout a claim got. */
function tag(dirs: string[]): string[] {
  return dirs.map((dir, index) => {
    const name = `warm-probe-${index}-${Math.random().toString(36).slice(2)}`;
    writeFileSync(join(dir, "checkout", ".git", name), "");
    return name;
  });
}

let world: World;
afterEach(() => world.dispose());

describe("warm DevBoxes", () => {
  it("a claim takes a warm DevBox: its clone and setup, run before the claim, not again", async () => {
    world = new World(2);
    const cold = await world.claim("d1", 1);
    expect(cold.ready).toMatchObject({ ok: true });
    await world.pool.settled();
    const warm = world.warmDirs();
    expect(warm).toHaveLength(1);
    const [probe] = tag(warm);

    await world.claim("d2", 1);
    // The checkout is the warm one (moved, not cloned), set up once, before the claim.
    expect(existsSync(join(world.checkout("d2"), ".git", probe ?? ""))).toBe(true);
    expect(world.setupRuns("d2")).toBe(1);
    const log = readFileSync(world.executor.paths("d2").logFile, "utf8");
    expect(log).toContain("set up while warm");
    expect(git(world.checkout("d2"), "branch", "--show-current")).toBe("clustercode/d2");
    // The claim's origin is its own hub route or source, not the warm placeholder.
    expect(git(world.checkout("d2"), "remote", "get-url", "origin")).toBe(source);
  });

  it("refills the pool to N in the background after each claim", async () => {
    world = new World(4);
    await world.claim("d1", 2);
    await world.pool.settled();
    expect(world.pool.ready).toBe(2);
    await world.claim("d2", 2);
    await world.pool.settled();
    expect(world.pool.ready).toBe(2);
    expect(world.warmDirs()).toHaveLength(2);
  });

  it("discards warm DevBoxes made at an older head of the default branch", async () => {
    world = new World(2);
    await world.claim("d1", 1);
    await world.pool.settled();
    const old = world.warmDirs();
    const moved = commit("moved.txt", "moved\n");
    // A push to the default branch, as the app hears of it.
    world.moves.moved(source);
    await world.pool.settled();
    const fresh = world.warmDirs();
    expect(fresh).toHaveLength(1);
    expect(fresh).not.toEqual(old);
    expect(git(join(fresh[0] ?? "", "checkout"), "rev-parse", "HEAD")).toBe(moved);
  });

  it("a stale warm DevBox claimed after the branch moved sets up again, and the pool renews", async () => {
    world = new World(2);
    await world.claim("d1", 1);
    await world.pool.settled();
    const moved = commit("later.txt", "later\n");
    // Nobody said the branch moved: the claim sees it.
    await world.claim("d2", 1);
    expect(git(world.checkout("d2"), "rev-parse", "HEAD")).toBe(moved);
    expect(world.setupRuns("d2")).toBe(2);
    await world.pool.settled();
    const [renewed] = world.warmDirs();
    expect(git(join(renewed ?? "", "checkout"), "rev-parse", "HEAD")).toBe(moved);
  });

  it("holds no token before its claim and serves exactly one claim", async () => {
    world = new World(1);
    const first = await world.claim("d1", 1);
    await world.pool.settled();
    const [dir] = world.warmDirs();
    expect(dir).toBeDefined();
    // Nothing runs in a warm DevBox and no run's token is in it.
    expect(existsSync(join(dir ?? "", "pid"))).toBe(false);
    expect(filesContaining(dir ?? "", first.token)).toEqual([]);
    const [probe] = tag(world.warmDirs());
    // Two claims at once with one warm DevBox: one takes it, the other clones.
    await Promise.all([world.claim("d2", 1), world.claim("d3", 1)]);
    const holders = ["d2", "d3"].filter((id) =>
      existsSync(join(world.checkout(id), ".git", probe ?? "")),
    );
    expect(holders).toHaveLength(1);
    // A used DevBox never comes back: the pool's next one is a new clone.
    await world.executor.stop(holders[0] ?? "");
    await world.pool.settled();
    const again = world.warmDirs();
    expect(again).toHaveLength(1);
    expect(existsSync(join(again[0] ?? "", "checkout", ".git", probe ?? ""))).toBe(false);
  });

  it("warm 0, or no warm, keeps today's behaviour and stops a pool kept before", async () => {
    world = new World(2);
    await world.claim("d1");
    await world.pool.settled();
    expect(world.warmDirs()).toEqual([]);
    expect(world.sourced).toEqual([]);
    await world.claim("d2", 1);
    await world.pool.settled();
    expect(world.warmDirs()).toHaveLength(1);
    await world.claim("d3", 0);
    await world.pool.settled();
    expect(world.warmDirs()).toEqual([]);
    expect(world.setupRuns("d3")).toBe(1);
  });

  it("keeps no more warm DevBoxes than the host's cap, over every spec", async () => {
    world = new World(2);
    await world.claim("d1", 3);
    await world.claim("d2", 2, { setup: ["true"] });
    await world.pool.settled();
    expect(world.pool.ready).toBe(2);
    expect(world.warmDirs()).toHaveLength(2);
  });

  it("closing stops the warm DevBoxes being made and removes them: no process is left", async () => {
    world = new World(2);
    // A claimed DevBox's setup knows its run; a warm one's does not, and waits.
    const slow = ['test -n "$CLUSTERCODE_RUN_ID" || sleep 37.25'];
    await world.claim("d1", 2, { setup: slow });
    // The two warm setups are running now.
    await waitUntil(() => sleepers().length === 2);
    await world.executor.stopAll();
    expect(sleepers()).toEqual([]);
    expect(world.warmDirs()).toEqual([]);
  });
});

describe("warm DevBoxes the default branch asks for", () => {
  const SETUP_YAML = `devbox: { setup: [ "echo ran >> .setup-runs" ], warm: 1 }`;

  it("are ready before the first claim, which takes one", async () => {
    world = new World(2);
    world.declare(SETUP_YAML);
    await world.pool.settled();
    const warm = world.warmDirs();
    expect(warm).toHaveLength(1);
    const [probe] = tag(warm);
    // The first claim of all, with the spec the engine builds from the same workflow.
    await world.claim("d1", 1);
    expect(existsSync(join(world.checkout("d1"), ".git", probe ?? ""))).toBe(true);
    expect(world.setupRuns("d1")).toBe(1);
    expect(readFileSync(world.executor.paths("d1").logFile, "utf8")).toContain("set up while warm");
  });

  it("stop when the workflow no longer asks, and a run of an older workflow does not undo that", async () => {
    world = new World(2);
    world.declare(SETUP_YAML.replace("warm: 1", "warm: 2"));
    await world.pool.settled();
    expect(world.warmDirs()).toHaveLength(2);
    // A run pinned to a workflow from before: its claim does not shrink the declared pool.
    await world.claim("d1", 1);
    await world.pool.settled();
    expect(world.pool.ready).toBe(2);
    world.declare(`devbox: { setup: [ "echo ran >> .setup-runs" ] }`);
    await world.pool.settled();
    expect(world.warmDirs()).toEqual([]);
    expect(world.pool.ready).toBe(0);
  });

  it("share the host's mirror and hold no credential of the source", async () => {
    const secret = `s3cr3t-${Math.random().toString(36).slice(2)}`;
    // As the app's source does: the token only in git's environment, never in an address.
    const sourceEnv = {
      GIT_CONFIG_COUNT: "1",
      GIT_CONFIG_KEY_0: "http.extraHeader",
      GIT_CONFIG_VALUE_0: `AUTHORIZATION: basic ${secret}`,
    };
    world = new World(2, { sourceEnv });
    world.declare(SETUP_YAML.replace("warm: 1", "warm: 2"));
    await world.pool.settled();
    const checkouts = world.warmDirs().map((dir) => join(dir, "checkout"));
    expect(checkouts).toHaveLength(2);
    const mirror = repoMirrorPath(world.stateDir, source);
    for (const checkout of checkouts) {
      // The history is borrowed from the one mirror, not copied into each warm DevBox.
      expect(readFileSync(join(checkout, ".git", "objects", "info", "alternates"), "utf8")).toBe(
        `${join(mirror, "objects")}\n`,
      );
      expect(git(checkout, "count-objects", "-v")).toMatch(/^count: 0$[\s\S]*^size-pack: 0$/m);
      expect(git(checkout, "remote", "get-url", "origin")).toBe("warm:unclaimed");
    }
    // Nowhere in the state directory: not the mirror, not a warm DevBox, not a log.
    expect(filesContaining(world.stateDir, secret)).toEqual([]);
    expect(readFileSync(join(mirror, "config"), "utf8").toLowerCase()).not.toContain("extraheader");
    // A claim of one holds no trace of it either, and its origin is its own.
    await world.claim("d1", 2);
    expect(filesContaining(world.executor.paths("d1").dir, secret)).toEqual([]);
    expect(git(world.checkout("d1"), "remote", "get-url", "origin")).toBe(source);
  });

  it("are set up inside the sandbox, where the mirror they borrow from is bound", async () => {
    world = new World(1, { sandboxed: true });
    // Reads the history, which is the mirror's: the setup fails unless the mirror is there.
    world.declare(`devbox: { setup: [ "git rev-list --count HEAD > .commits" ], warm: 1 }`);
    await world.pool.settled();
    const [dir] = world.warmDirs();
    expect(existsSync(join(dir ?? "", "checkout", ".git", WARM_MARKER_FILE))).toBe(true);
    expect(readFileSync(join(dir ?? "", "checkout", ".commits"), "utf8").trim()).toBe(
      git(source, "rev-list", "--count", "HEAD"),
    );
  });
});

/** The files under `dir` whose content holds `text`. */
function filesContaining(dir: string, text: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .filter((path) => readFileSync(path).includes(text));
}

/** The pids of the warm setups' `sleep 37.25`. */
function sleepers(): string[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8") === "sleep\u000037.25\u0000";
      } catch {
        return false;
      }
    });
}

async function waitUntil(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error("the condition never held");
}
