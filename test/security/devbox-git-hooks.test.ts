/**
 * A command in a DevBox is the repository's code: it can write `.git/hooks/pre-push` or point
 * the checkout's config at code of its own (`core.hooksPath`, `core.fsmonitor`, a pushurl). The
 * agent's own git (its checkpoint push, which carries the DevBox's hub token) must run none of it.
 * Product defaults: bubblewrap, a real hub serving git, the built agent.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { CommandRequest } from "../../src/engine/commands.js";
import type { DevBoxEvent } from "../../src/devbox/hub/events.js";
import { DevBoxHub } from "../../src/devbox/hub/hub.js";
import { LocalExecutor } from "../../src/devbox/local/executor.js";

const root = realpathSync(mkdtempSync(join(tmpdir(), "clustercode-git-hooks-")));
afterAll(() => rm(root, { recursive: true, force: true }));
// The DevBox's checkout belongs to its own uid when the tests run as root: trust it here.
const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "safe.directory=*", ...args], { cwd, encoding: "utf8" }).trim();

const RUN_BRANCH = "clustercode/7-run7";

/** A hub serving git from a bare upstream, and one started DevBox. */
class World {
  readonly events: DevBoxEvent[] = [];
  readonly dir = mkdtempSync(join(root, "world-"));
  readonly upstream = join(this.dir, "github.git");
  readonly hub: DevBoxHub;
  readonly executor: LocalExecutor;

  constructor() {
    const seed = join(this.dir, "seed");
    git(this.dir, "init", "--quiet", "--initial-branch=main", seed);
    writeFileSync(join(seed, "README.md"), "# demo\n");
    git(seed, "add", "README.md");
    git(seed, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", "init");
    git(this.dir, "clone", "--quiet", "--bare", seed, this.upstream);
    mkdirSync(join(this.dir, "home"));
    this.hub = new DevBoxHub({
      onEvent: (event) => this.events.push(event),
      git: {
        stateDir: join(this.dir, "hub"),
        upstreamOf: () => Promise.resolve({ url: this.upstream, env: {} }),
        policyOf: () => Promise.resolve({ runBranch: RUN_BRANCH, allowWorkflowChanges: false }),
      },
    });
    this.executor = new LocalExecutor({
      stateDir: join(this.dir, "state"),
      env: { PATH: process.env.PATH, HOME: join(this.dir, "home") },
    });
  }

  async start(): Promise<void> {
    const apiUrl = await this.hub.listen();
    const { token } = this.hub.register({ devboxId: "run7-box", runId: "run7" });
    await this.executor.start({
      ...{ devboxId: "run7-box", runId: "run7", apiUrl, token },
      repository: this.hub.gitUrl("run7-box", "acme/app"),
      spec: { branch: RUN_BRANCH, baseBranch: "main", setup: [], secrets: [] },
    });
  }

  async run(commandId: string, command: CommandRequest["command"]) {
    this.hub.dispatch("run7-box", { commandId, command });
    for (let i = 0; i < 1000; i++) {
      const found = this.events.find(
        (event) => event.type === "command.finished" && event.result.commandId === commandId,
      );
      if (found?.type === "command.finished") return found.result;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`command ${commandId} never finished: ${JSON.stringify(this.events)}`);
  }

  get paths() {
    return this.executor.paths("run7-box");
  }

  upstreamHead(): string | undefined {
    try {
      return git(this.upstream, "rev-parse", "--verify", "--quiet", `refs/heads/${RUN_BRANCH}`);
    } catch {
      return undefined;
    }
  }

  async dispose() {
    await this.executor.stopAll();
    await this.hub.close();
  }
}

/** A script that leaves the environment it ran with (the token, when it has it) in the DevBox. */
const LEAK = (home: string) =>
  `#!/bin/sh\nenv > "${home}/leak-$(basename "$0")-$$"\ncat >/dev/null 2>&1 || true\nexit 0\n`;

let world: World;
afterEach(() => world.dispose());

describe("the agent's own git in a DevBox", () => {
  it("runs no hook and no config the repository's commands wrote, so its token stays with it", async () => {
    world = new World();
    await world.start();
    const home = world.paths.home;
    const script = LEAK(home).replaceAll("'", "'\\''");
    const attack = [
      "set -e",
      "mkdir -p .git/hooks .git/evil-hooks",
      `for hook in pre-push post-commit reference-transaction; do`,
      `  printf '%s' '${script}' > .git/hooks/$hook`,
      `  cp .git/hooks/$hook .git/evil-hooks/$hook`,
      "done",
      `printf '%s' '${script}' > .git/fsmonitor.sh`,
      "chmod +x .git/hooks/* .git/evil-hooks/* .git/fsmonitor.sh",
      "git config core.hooksPath .git/evil-hooks",
      'git config core.fsmonitor "$PWD/.git/fsmonitor.sh"',
      "git config remote.origin.pushurl /nowhere/else.git",
      "echo work > work.txt",
    ].join("\n");
    expect((await world.run("attack", { type: "script", script: attack })).exitCode).toBe(0);
    const checkpoint = await world.run("c1", { type: "checkpoint", message: "checkpoint" });

    // Nothing of the repository's ran with the agent: no environment was left behind.
    expect(readdirSync(home).filter((name) => name.startsWith("leak-"))).toEqual([]);
    // And the push went where the agent's origin says, through the hub.
    expect(checkpoint.exitCode).toBe(0);
    expect(world.upstreamHead()).toBe(git(world.paths.checkout, "rev-parse", "HEAD"));
  });

  it("still checkpoints honest work, and commands keep their own git settings", async () => {
    world = new World();
    await world.start();
    const work = [
      "git config user.name Dev",
      "echo work > work.txt",
      "git add work.txt",
      "git -c user.email=dev@example.com commit -qm 'own commit'",
      "echo more > more.txt",
    ].join("\n");
    expect((await world.run("w1", { type: "script", script: work })).exitCode).toBe(0);
    expect((await world.run("c1", { type: "checkpoint", message: "cp" })).exitCode).toBe(0);
    const checkout = world.paths.checkout;
    expect(world.upstreamHead()).toBe(git(checkout, "rev-parse", "HEAD"));
    expect(git(checkout, "log", "--format=%s", "-2")).toBe("cp\nown commit");
    expect(git(checkout, "config", "user.name")).toBe("Dev");
  });
});
