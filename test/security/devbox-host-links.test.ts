/**
 * A warm DevBox's setup is the repository's code (a hostile repository opened with
 * `clustercode ui`, a compromised install script). It runs sandboxed, but it can leave links in
 * its own directory where the host later writes: the warm marker, HOME's `.gitconfig`, the log,
 * the pid file, `.git` itself. The host must write none of its files through them. Product
 * defaults: bubblewrap, a real hub, the built agent.
 */
import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  writeFileSync,
} from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { DevBoxEvent } from "../../src/devbox/hub/events.js";
import { DevBoxHub } from "../../src/devbox/hub/hub.js";
import { LocalExecutor } from "../../src/devbox/local/executor.js";
import { WarmDemand, warmSpecsOf } from "../../src/devbox/warm-demand.js";
import { parseWorkflow } from "../../src/workflow/parse.js";

const root = realpathSync(mkdtempSync(join(tmpdir(), "clustercode-host-links-")));
const source = join(root, "source");
/** The host's files the attack aims at: outside every DevBox. */
const host = join(root, "host");
const HOST_TEXT = "the host's own file\n";
const TARGETS = ["marker", "gitconfig", "log", "pid"] as const;
const hostGitDir = join(host, "repo.git");
const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, { cwd, encoding: "utf8" }).trim();

beforeAll(() => {
  git(root, "init", "--quiet", "--initial-branch=main", source);
  writeFileSync(join(source, "README.md"), "# demo\n");
  git(source, "add", "README.md");
  git(source, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", "init");
  mkdirSync(host);
  git(host, "init", "--quiet", "--bare", hostGitDir);
});
afterAll(() => rm(root, { recursive: true, force: true }));

/** A hub and an executor with the product's walls and one warm DevBox of `setup`. */
class World {
  readonly events: DevBoxEvent[] = [];
  readonly stateDir = mkdtempSync(join(root, "state-"));
  readonly hub = new DevBoxHub({ onEvent: (event) => this.events.push(event), lapseMs: 3000 });
  readonly demand = new WarmDemand();
  readonly errors: unknown[] = [];
  readonly executor = new LocalExecutor({
    stateDir: this.stateDir,
    graceMs: 2000,
    sandbox: { unsafe: false },
    env: { ...process.env, CLUSTERCODE_DEVBOX_HEARTBEAT_MS: "200" },
    warm: {
      max: 1,
      demand: this.demand,
      source: (repo) => Promise.resolve({ url: repo, env: {} }),
      onError: (error) => this.errors.push(error),
    },
  });

  /** Makes the warm DevBox of `setup` and waits until it is made (or failed). */
  async warm(setup: string[]) {
    const parsed = parseWorkflow(`version: 1
name: t
on: { label: go }
devbox: { setup: ${JSON.stringify(setup)}, warm: 1 }
nodes:
  build: { kind: run, run: make }
`);
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.findings));
    this.demand.declare(source, warmSpecsOf(source, "main", [parsed.workflow]));
    await this.executor.warm?.settled();
    return setup;
  }

  /** Claims a DevBox of `setup` as a run would, and waits until it is ready. */
  async claim(devboxId: string, setup: string[]) {
    const apiUrl = await this.hub.listen();
    const { token } = this.hub.register({ devboxId, runId: "run9" });
    await this.executor.start({
      ...{ devboxId, runId: "run9", apiUrl, token, repository: source, repo: source },
      spec: {
        branch: `clustercode/9-${devboxId}`,
        baseBranch: "main",
        setup,
        secrets: [],
        warm: { count: 1, branch: "main" },
      },
    });
    return this.waitFor((e) => e.type === "devbox.ready" && e.devboxId === devboxId);
  }

  async waitFor(predicate: (event: DevBoxEvent) => boolean) {
    for (let i = 0; i < 1000; i++) {
      const found = this.events.find(predicate);
      if (found !== undefined) return found;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`no such event in ${JSON.stringify(this.events)}`);
  }

  async dispose() {
    await this.executor.stopAll();
    await this.hub.close();
  }
}

let world: World;
afterEach(() => world.dispose());

describe("links a warm DevBox leaves for the host", () => {
  it("are not written through: the host's files stay as they were", async () => {
    for (const name of TARGETS) writeFileSync(join(host, name), HOST_TEXT);
    world = new World();
    // As root the DevBox's directory itself is not the DevBox's to write (its log and pid file
    // are then out of reach); as another user it is, and the last two lines plant those too.
    const setup = await world.warm([
      [
        "set -e",
        `rm -f .git/clustercode-warm && ln -s ${host}/marker .git/clustercode-warm`,
        `rm -f ../home/.gitconfig && ln -s ${host}/gitconfig ../home/.gitconfig`,
        `ln -s ${host}/log ../agent.log 2>/dev/null || true`,
        `ln -s ${host}/pid ../pid 2>/dev/null || true`,
      ].join("\n"),
    ]);
    const ready = await world.claim("links", setup);
    for (const name of TARGETS) expect(readFileSync(join(host, name), "utf8")).toBe(HOST_TEXT);
    // The DevBox is none the worse for it: its own files are there, as files.
    expect(ready).toMatchObject({ ok: true });
    const paths = world.executor.paths("links");
    // The marker was written, as a file of its own in the link's place: the setup is not rerun.
    expect(readFileSync(paths.logFile, "utf8")).toContain("set up while warm");
    expect(readFileSync(join(paths.home, ".gitconfig"), "utf8")).toContain("[safe]");
  });

  it("do not lead the host through a `.git` that is a link to a host repository", async () => {
    const config = readFileSync(join(hostGitDir, "config"), "utf8");
    world = new World();
    const setup = await world.warm([`mv .git ../home/moved.git && ln -s ${hostGitDir} .git`]);
    const ready = await world.claim("gitdir", setup);
    expect(existsSync(join(hostGitDir, "clustercode-warm"))).toBe(false);
    expect(readFileSync(join(hostGitDir, "config"), "utf8")).toBe(config);
    // The warm DevBox was refused; the claim cloned one of its own (and ran its setup there).
    expect(world.errors).toContainEqual(expect.objectContaining({ code: "unsafe-path" }));
    expect(ready).toMatchObject({ ok: true });
  });

  it("an honest warm setup still counts: the claim skips it and starts at once", async () => {
    world = new World();
    const setup = await world.warm(["echo ran >> ../home/setup-runs"]);
    const ready = await world.claim("honest", setup);
    expect(ready).toMatchObject({ ok: true });
    const paths = world.executor.paths("honest");
    expect(readFileSync(join(paths.home, "setup-runs"), "utf8")).toBe("ran\n");
    expect(readFileSync(paths.logFile, "utf8")).toContain("set up while warm");
    expect(world.errors).toEqual([]);
  });
});
