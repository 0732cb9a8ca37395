/**
 * DevBox checkouts are blobless clones from the host's mirror, with origin still the real
 * remote (here the hub's git route, as on the app) and no credential written anywhere.
 */
import { execFileSync, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeAll, afterAll, describe, expect, it } from "vitest";
import type { CommandResult, DevBoxSpec } from "../../../src/engine/commands.js";
import type { DevBoxEvent } from "../../../src/devbox/hub/events.js";
import { DevBoxHub } from "../../../src/devbox/hub/hub.js";
import { LocalExecutor } from "../../../src/devbox/local/executor.js";
import { mirrorPath, refreshMirror } from "../../../src/devbox/local/mirror.js";
import { setupCacheDir } from "../../../src/devbox/local/setup-cache-dirs.js";

const RUN_BRANCH = "clustercode/7-1";
const root = realpathSync(mkdtempSync(join(tmpdir(), "clustercode-partial-")));
const upstream = join(root, "upstream.git");
const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, { cwd, encoding: "utf8", stdio: "pipe" }).trim();

beforeAll(() => {
  const seed = join(root, "seed");
  git(root, "init", "--quiet", "--initial-branch=main", seed);
  // Three versions of one file: a blobless checkout holds only the last until asked.
  for (const version of ["one", "two", "three"]) {
    writeFileSync(join(seed, "data.txt"), `${version}\n`);
    git(seed, "add", ".");
    git(seed, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", version);
  }
  git(root, "clone", "--quiet", "--bare", seed, upstream);
});
afterAll(() => rm(root, { recursive: true, force: true }));

class World {
  readonly events: DevBoxEvent[] = [];
  readonly stateDir = mkdtempSync(join(root, "state-"));
  readonly tokens: string[] = [];
  readonly hub = new DevBoxHub({
    onEvent: (event) => this.events.push(event),
    lapseMs: 3000,
    git: {
      stateDir: join(this.stateDir, "hub-git"),
      upstreamOf: () => Promise.resolve({ url: upstream, env: {} }),
      policyOf: () => Promise.resolve({ runBranch: RUN_BRANCH, allowWorkflowChanges: false }),
    },
  });

  readonly executor: LocalExecutor;

  constructor(sandboxed: boolean) {
    this.executor = new LocalExecutor({
      stateDir: this.stateDir,
      graceMs: 2000,
      sandbox: { unsafe: !sandboxed },
      env: {
        ...process.env,
        CLUSTERCODE_DEVBOX_HEARTBEAT_MS: "200",
        CLUSTERCODE_DEVBOX_LAPSE_MS: "3000",
      },
    });
  }

  async start(devboxId: string, spec: Partial<DevBoxSpec> = {}) {
    const apiUrl = await this.hub.listen();
    const { token } = this.hub.register({ devboxId, runId: "run7" });
    this.tokens.push(token);
    await this.executor.start({
      devboxId,
      runId: "run7",
      apiUrl,
      token,
      repository: this.hub.gitUrl(devboxId, "octo/repo"),
      spec: { branch: RUN_BRANCH, baseBranch: "main", setup: [], secrets: [], ...spec },
    });
    return this.waitFor((event) => event.type === "devbox.ready" && event.devboxId === devboxId);
  }

  async script(devboxId: string, commandId: string, script: string): Promise<CommandResult> {
    this.hub.dispatch(devboxId, { commandId, command: { type: "script", script } });
    const event = await this.waitFor(
      (e) => e.type === "command.finished" && e.result.commandId === commandId,
    );
    if (event.type !== "command.finished") throw new Error("unreachable");
    return event.result;
  }

  async waitFor(predicate: (event: DevBoxEvent) => boolean, timeoutMs = 20_000) {
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

let world: World;
afterEach(() => world.dispose());

/** Every config file git would read for `repo` (a checkout's or a bare mirror's). */
function configOf(repo: string): string {
  const file = [join(repo, ".git", "config"), join(repo, "config")].find((path) => {
    try {
      readFileSync(path);
      return true;
    } catch {
      return false;
    }
  });
  return readFileSync(file ?? "", "utf8");
}

describe("partial clones from the host's mirror", () => {
  it("clones blobless from the mirror, keeps origin on the real remote and writes no credential", async () => {
    world = new World(false);
    const ready = await world.start("run7-box1");
    expect(ready).toMatchObject({ ok: true, sha: git(upstream, "rev-parse", "main") });
    const { checkout } = world.executor.paths("run7-box1");
    const mirror = mirrorPath(world.stateDir, world.hub.gitUrl("run7-box1", "octo/repo"));
    expect(mirror).toBe(join(world.stateDir, "mirrors", "octo", "repo.git"));

    expect(git(checkout, "config", "remote.mirror.partialclonefilter")).toBe("blob:none");
    expect(git(checkout, "config", "remote.origin.url")).toBe(
      world.hub.gitUrl("run7-box1", "octo/repo"),
    );
    // The history is borrowed from the mirror, not copied: the checkout's own store is empty.
    expect(readFileSync(join(checkout, ".git", "objects", "info", "alternates"), "utf8")).toBe(
      `${join(mirror, "objects")}\n`,
    );
    expect(git(checkout, "count-objects", "-v")).toMatch(/^count: 0$[\s\S]*^size-pack: 0$/m);
    for (const config of [configOf(checkout), configOf(mirror)]) {
      expect(config).not.toContain(world.tokens[0]);
      expect(config.toLowerCase()).not.toContain("extraheader");
    }
    expect(configOf(mirror)).not.toContain("url =");
    // Nor in FETCH_HEAD, which would record the address it was fetched from.
    expect(existsSync(join(mirror, "FETCH_HEAD"))).toBe(false);

    // An old blob comes from the mirror when first needed, with no credential at hand.
    const old = await world.script("run7-box1", "c1", "git show HEAD~2:data.txt");
    expect(old).toMatchObject({ exitCode: 0 });
    expect(old.output).toContain("one");
    const commit = await world.script(
      "run7-box1",
      "c2",
      `echo four > data.txt && git -c user.name=T -c user.email=t@example.com commit -qam four`,
    );
    expect(commit).toMatchObject({ exitCode: 0 });
  });

  it("works inside the bubblewrap sandbox, where the mirror is bound read-only", async () => {
    world = new World(true);
    const ready = await world.start("run7-box2");
    expect(ready).toMatchObject({ ok: true, isolation: "bubblewrap" });
    const old = await world.script("run7-box2", "c1", "git show HEAD~1:data.txt");
    expect(old).toMatchObject({ exitCode: 0 });
    expect(old.output).toContain("two");
    const write = await world.script(
      "run7-box2",
      "c2",
      `touch "$(git config remote.mirror.url | sed 's#file://##')/planted"`,
    );
    expect(write.exitCode).not.toBe(0);
    // An injected agent plants a mirror lock held by a live process (pid 1) to stall the host's
    // next fetches: nothing it writes lands beside the host's mirror.
    await world.script(
      "run7-box2",
      "c3",
      `echo 1 > "$(git config remote.mirror.url | sed 's#file://##').lock"`,
    );
    const mirror = join(world.stateDir, "mirrors", "octo", "repo.git");
    expect(existsSync(`${mirror}.lock`)).toBe(false);
  });

  it("shares one mirror fetch between concurrent claims", async () => {
    world = new World(false);
    const mirror = join(world.stateDir, "mirrors", "octo", "shared.git");
    const env = { PATH: process.env.PATH ?? "" };
    const first = refreshMirror(mirror, upstream, env);
    expect(refreshMirror(mirror, upstream, env)).toBe(first);
    await first;
    const ready = await Promise.all([world.start("run7-box3"), world.start("run7-box4")]);
    expect(ready.map((event) => event.type === "devbox.ready" && event.ok)).toEqual([true, true]);
    const mirrors = join(world.stateDir, "mirrors", "octo");
    expect(execFileSync("ls", [mirrors], { encoding: "utf8" }).split("\n").filter(Boolean)).toEqual(
      ["repo.git", "shared.git"],
    );
  });

  it("takes over at once the mirror lock of a process that died while fetching, and waits on a live one", async () => {
    world = new World(false);
    const mirror = join(world.stateDir, "mirrors", "octo", "locked.git");
    const env = { PATH: process.env.PATH ?? "" };
    mkdirSync(dirname(mirror), { recursive: true });
    // A replica killed mid-fetch leaves its lock behind, holding its (now free) pid.
    const dead = spawnSync("true").pid;
    writeFileSync(`${mirror}.lock`, `${dead}\n`);
    await refreshMirror(mirror, upstream, env);
    expect(git(mirror, "rev-parse", "refs/heads/main")).toBe(git(upstream, "rev-parse", "main"));
    expect(existsSync(`${mirror}.lock`)).toBe(false);
    // A live holder's lock is waited on: the fetch starts only once it is given up.
    const other = join(world.stateDir, "mirrors", "octo", "held.git");
    writeFileSync(`${other}.lock`, `${process.ppid}\n`);
    let fetched = false;
    const waiting = refreshMirror(other, upstream, env).then(() => (fetched = true));
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(fetched).toBe(false);
    rmSync(`${other}.lock`);
    await waiting;
    expect(git(other, "rev-parse", "refs/heads/main")).toBe(git(upstream, "rev-parse", "main"));
  });

  it("does not fetch the mirror again for a claim right after another, which still starts at origin's head", async () => {
    world = new World(false);
    git(upstream, "branch", "trunk", "main");
    const before = git(upstream, "rev-parse", "trunk");
    await world.start("run7-box11", { branch: "clustercode/7-11", baseBranch: "trunk" });
    // Pushed between the two claims, well within the mirror's freshness window.
    const tree = git(upstream, "rev-parse", "trunk^{tree}");
    const later = git(upstream, "commit-tree", "-p", "trunk", "-m", "later", tree);
    git(upstream, "update-ref", "refs/heads/trunk", later);
    const ready = await world.start("run7-box12", {
      branch: "clustercode/7-12",
      baseBranch: "trunk",
    });
    // The agent fetched its base from origin: the run starts at the new head all the same.
    expect(ready).toMatchObject({ ok: true, sha: later });
    const mirror = join(world.stateDir, "mirrors", "octo", "repo.git");
    expect(git(mirror, "rev-parse", "refs/heads/trunk")).toBe(before);
  });

  it("has the hub's staging repositories borrow one object store per upstream", async () => {
    world = new World(false);
    await world.start("run7-box9");
    await world.start("run7-box10");
    const hubGit = join(world.stateDir, "hub-git", "hub-git");
    const shared = readdirSync(join(hubGit, "shared"));
    expect(shared).toHaveLength(1);
    const staging = readdirSync(hubGit).filter((name) => name.endsWith(".git"));
    expect(staging).toHaveLength(2);
    for (const name of staging) {
      const alternates = join(hubGit, name, "objects", "info", "alternates");
      expect(readFileSync(alternates, "utf8")).toBe(
        `${join(hubGit, "shared", shared[0] ?? "", "objects")}\n`,
      );
      // Everything came from the shared store: the staging repository holds no pack of its own.
      expect(git(join(hubGit, name), "count-objects", "-v")).toMatch(/^size-pack: 0$/m);
    }
    expect(configOf(join(hubGit, "shared", shared[0] ?? ""))).not.toContain("url =");
  });

  it("falls back to a plain clone, saying so in the DevBox's log, when the mirror fails", async () => {
    world = new World(false);
    // A file where the mirrors' directory should be: no mirror can be made.
    writeFileSync(join(world.stateDir, "mirrors"), "not a directory\n");
    const ready = await world.start("run7-box5");
    expect(ready).toMatchObject({ ok: true });
    const { checkout, logFile } = world.executor.paths("run7-box5");
    expect(readFileSync(logFile, "utf8")).toContain("the mirror clone failed, cloning in full");
    expect(git(checkout, "config", "remote.origin.url")).toBe(
      world.hub.gitUrl("run7-box5", "octo/repo"),
    );
    expect(configOf(checkout)).not.toContain(world.tokens[0]);
  });
});

describe("the setup cache across DevBoxes", () => {
  const install = [
    'if [ "$CLUSTERCODE_CACHE_HIT" = true ]; then echo SKIPPED; else mkdir -p out && echo built > out/file && echo INSTALLED; fi',
  ];
  const cache = [{ key: ["data.txt"], paths: ["out"] }];

  it("saves what setup made in a sandboxed DevBox and restores it in the next", async () => {
    world = new World(true);
    expect(await world.start("run7-box6", { setup: install, cache })).toMatchObject({ ok: true });
    const first = readFileSync(world.executor.paths("run7-box6").logFile, "utf8");
    expect(first).toContain("INSTALLED");
    expect(first).toContain("setup cache: saved out");
    expect(await world.start("run7-box7", { setup: install, cache })).toMatchObject({ ok: true });
    const { checkout, logFile } = world.executor.paths("run7-box7");
    const second = readFileSync(logFile, "utf8");
    expect(second).toContain("setup cache: restored out");
    expect(second).toContain("SKIPPED");
    expect(readFileSync(join(checkout, "out", "file"), "utf8")).toBe("built\n");
  });
  it("lets a sandboxed DevBox's commands write no cache (only its setup's save does), and see no other repository's", async () => {
    world = new World(true);
    // The hub's route and GitHub's address name the same cache: octo/repo.
    const repository = "https://github.com/octo/repo.git";
    const own = setupCacheDir(world.stateDir, repository, RUN_BRANCH);
    const base = setupCacheDir(world.stateDir, repository, "main");
    const other = setupCacheDir(world.stateDir, "https://github.com/other/repo.git", "main");
    mkdirSync(other, { recursive: true });
    writeFileSync(join(other, "secret.tar"), "another repository's\n");
    const ready = await world.start("run7-box8", { setup: install, cache });
    expect(ready).toMatchObject({ ok: true, isolation: "bubblewrap" });
    const plant = await world.script(
      "run7-box8",
      "c1",
      `touch "${own}/own" || echo OWN-REFUSED; touch "${base}/planted" || echo REFUSED; cat "${other}/secret.tar" || echo HIDDEN`,
    );
    expect(plant.output).toContain("OWN-REFUSED");
    expect(plant.output).toContain("REFUSED");
    expect(plant.output).toContain("HIDDEN");
    expect(existsSync(join(base, "planted"))).toBe(false);
    expect(existsSync(join(own, "own"))).toBe(false);
  });
});
