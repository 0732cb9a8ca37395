/**
 * A DevBox starts on the commit its claim names (the run's last checkpoint) and on nothing else,
 * even at machine pace: when the host's mirror was fetched moments ago, before the run branch
 * moved, the next DevBox still starts on the new head, not on the mirror's older copy.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { DevBoxCommand, DevBoxSpec } from "../../../src/engine/commands.js";
import type { DevBoxEvent } from "../../../src/devbox/hub/events.js";
import { DevBoxHub } from "../../../src/devbox/hub/hub.js";
import { LocalExecutor } from "../../../src/devbox/local/executor.js";

const RUN_BRANCH = "clustercode/9-1";
const root = realpathSync(mkdtempSync(join(tmpdir(), "clustercode-start-sha-")));
const upstream = join(root, "upstream.git");
const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, { cwd, encoding: "utf8", stdio: "pipe" }).trim();

beforeAll(() => {
  const seed = join(root, "seed");
  git(root, "init", "--quiet", "--initial-branch=main", seed);
  writeFileSync(join(seed, "round.txt"), "base\n");
  git(seed, "add", ".");
  git(seed, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", "base");
  git(seed, "branch", RUN_BRANCH);
  git(root, "clone", "--quiet", "--bare", seed, upstream);
});
afterAll(() => rm(root, { recursive: true, force: true }));

/** The product's local path: a hub serving git, DevBoxes in the default sandbox. */
class World {
  readonly events: DevBoxEvent[] = [];
  readonly stateDir = mkdtempSync(join(root, "state-"));
  readonly hub = new DevBoxHub({
    onEvent: (event) => this.events.push(event),
    lapseMs: 15_000,
    git: {
      stateDir: join(this.stateDir, "hub-git"),
      upstreamOf: () => Promise.resolve({ url: upstream, env: {} }),
      policyOf: () => Promise.resolve({ runBranch: RUN_BRANCH, allowWorkflowChanges: false }),
    },
  });
  readonly executor = new LocalExecutor({
    stateDir: this.stateDir,
    graceMs: 2000,
    // The product's defaults: no sandbox option, so DevBoxes are sandboxed.
    env: {
      ...process.env,
      CLUSTERCODE_DEVBOX_HEARTBEAT_MS: "1000",
      CLUSTERCODE_DEVBOX_LAPSE_MS: "15000",
    },
  });

  async start(devboxId: string, spec: Partial<DevBoxSpec>) {
    const apiUrl = await this.hub.listen();
    const { token } = this.hub.register({ devboxId, runId: "run9" });
    await this.executor.start({
      devboxId,
      runId: "run9",
      apiUrl,
      token,
      repository: this.hub.gitUrl(devboxId, "octo/moved"),
      spec: { branch: RUN_BRANCH, baseBranch: RUN_BRANCH, setup: [], secrets: [], ...spec },
    });
    const ready = await this.waitFor((e) => e.type === "devbox.ready" && e.devboxId === devboxId);
    if (ready.type !== "devbox.ready") throw new Error("unreachable");
    return ready;
  }

  async run(devboxId: string, commandId: string, command: DevBoxCommand) {
    this.hub.dispatch(devboxId, { commandId, command });
    const event = await this.waitFor(
      (e) => e.type === "command.finished" && e.result.commandId === commandId,
    );
    if (event.type !== "command.finished") throw new Error("unreachable");
    return event.result;
  }

  async waitFor(predicate: (event: DevBoxEvent) => boolean, timeoutMs = 30_000) {
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

describe("a DevBox starts on the run's last checkpoint", () => {
  it("two rounds back to back: the second DevBox starts on the first's checkpoint, not the mirror's older head", async () => {
    world = new World();
    const first = git(upstream, "rev-parse", RUN_BRANCH);
    // Round one: its DevBox fetches the host's mirror (the run branch at `first`) and checkpoints.
    const one = await world.start("run9-box1", { sha: first });
    expect(one).toMatchObject({ ok: true, sha: first, isolation: "bubblewrap" });
    const edit = await world.run("run9-box1", "c1", {
      type: "script",
      script: "echo round one > round.txt",
    });
    expect(edit.exitCode).toBe(0);
    const saved = await world.run("run9-box1", "c2", {
      type: "checkpoint",
      message: "round one",
    });
    expect(saved).toMatchObject({ exitCode: 0 });
    const checkpoint = git(upstream, "rev-parse", RUN_BRANCH);
    expect(checkpoint).not.toBe(first);
    expect(saved.sha).toBe(checkpoint);
    await world.executor.stop("run9-box1");

    // Round two, at once: the mirror was fetched moments ago, before the checkpoint.
    const two = await world.start("run9-box2", { sha: checkpoint });
    expect(two).toMatchObject({ ok: true, sha: checkpoint });
    const read = await world.run("run9-box2", "c3", { type: "script", script: "cat round.txt" });
    expect(read.output).toContain("round one");
  }, 90_000);
});
