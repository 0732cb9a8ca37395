/**
 * End to end: a real hub, the local executor and the built agent (`dist/cli/main.js`, built by
 * `npm test` before vitest runs) against a real git repository in a temp directory.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { CommandRequest, CommandResult, DevBoxSpec } from "../../../src/engine/commands.js";
import {
  readRunningCommand,
  type RunningCommand,
} from "../../../src/devbox/agent/command-journal.js";
import type { DevBoxEvent } from "../../../src/devbox/hub/events.js";
import { DevBoxHub } from "../../../src/devbox/hub/hub.js";
import { LocalExecutor } from "../../../src/devbox/local/executor.js";
import { isAlive, waitForExit } from "../../../src/devbox/local/process-info.js";

const root = realpathSync(mkdtempSync(join(tmpdir(), "clustercode-devbox-test-")));
const source = join(root, "source");
const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, { cwd, encoding: "utf8" }).trim();

beforeAll(() => {
  git(root, "init", "--quiet", "--initial-branch=main", source);
  writeFileSync(join(source, "README.md"), "# demo\n");
  git(source, "add", "README.md");
  git(source, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", "init");
});
afterAll(() => rm(root, { recursive: true, force: true }));

/** One test's world: a hub, an executor on its own state directory, and the events seen. */
class World {
  readonly events: DevBoxEvent[] = [];
  readonly stateDir = mkdtempSync(join(root, "state-"));
  readonly hub = new DevBoxHub({ onEvent: (event) => this.events.push(event), lapseMs: 1500 });
  readonly executor = this.newExecutor();

  newExecutor() {
    return new LocalExecutor({
      stateDir: this.stateDir,
      graceMs: 2000,
      // These tests watch the agent's and its commands' pids from the host, which a sandbox
      // hides (its own PID namespace); the walls are tested in test/security/.
      sandbox: { unsafe: true },
      env: {
        ...process.env,
        CLUSTERCODE_DEVBOX_HEARTBEAT_MS: "200",
        CLUSTERCODE_DEVBOX_LAPSE_MS: "1500",
        FAKE_SECRET: "s3cret",
        OTHER_SECRET: "must-not-leak",
      },
    });
  }

  /** Registers and starts a DevBox, and waits until it is ready. */
  async start(devboxId: string, spec: Partial<DevBoxSpec> = {}, executor = this.executor) {
    const apiUrl = await this.hub.listen();
    const { token } = this.hub.register({ devboxId, runId: "run7" });
    await executor.start({
      devboxId,
      runId: "run7",
      apiUrl,
      token,
      repository: source,
      spec: { branch: "clustercode/7-1", baseBranch: "main", setup: [], secrets: [], ...spec },
    });
    return this.waitFor((event) => event.type === "devbox.ready" && event.devboxId === devboxId);
  }

  async run(devboxId: string, request: CommandRequest): Promise<CommandResult> {
    this.hub.dispatch(devboxId, request);
    const event = await this.waitFor(
      (e) => e.type === "command.finished" && e.result.commandId === request.commandId,
    );
    if (event.type !== "command.finished") throw new Error("unreachable");
    return event.result;
  }

  async waitFor(predicate: (event: DevBoxEvent) => boolean, timeoutMs = 10_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.events.find(predicate);
      if (found !== undefined) return found;
      if (Date.now() > deadline) throw new Error(`no such event in ${JSON.stringify(this.events)}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  agentPid(devboxId: string): number {
    return Number(readFileSync(this.executor.paths(devboxId).pidFile, "utf8"));
  }

  /** Waits until the agent records a running command, and returns its process group. */
  async runningCommand(devboxId: string): Promise<RunningCommand> {
    const gitDir = join(this.executor.paths(devboxId).checkout, ".git");
    // Bounded by time, not by a count of tries: a loaded machine starts a DevBox slower.
    for (const deadline = Date.now() + 20_000; Date.now() < deadline;) {
      const running = await readRunningCommand(gitDir);
      if (running !== undefined) return running;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error("the command never started");
  }

  async dispose() {
    await this.executor.stopAll();
    await this.hub.close();
  }
}

const sleepCommand = (commandId: string): CommandRequest => ({
  commandId,
  command: { type: "script", script: "echo started; sleep 30" },
});

let world: World;
afterEach(() => world.dispose());

describe("local DevBox", () => {
  it("runs scripts, agents and checkpoints in a fresh clone of the run branch", async () => {
    world = new World();
    const marker = join(root, `pwned-${process.pid}`);
    const brief = `Fix it $(touch ${marker}) and \`touch ${marker}\` "quoted" 'single'; rm -rf /`;
    const ready = await world.start("run7-box1", {
      setup: ["touch .git/setup-ran", 'echo "setting up with $FAKE_SECRET"'],
      secrets: ["FAKE_SECRET"],
    });
    const { checkout } = world.executor.paths("run7-box1");
    expect(ready).toEqual({
      type: "devbox.ready",
      devboxId: "run7-box1",
      ok: true,
      sha: git(source, "rev-parse", "main"),
      isolation: "none (CLUSTERCODE_UNSAFE_LOCAL_DEVBOX=1)",
    });
    expect(existsSync(join(checkout, ".git", "setup-ran"))).toBe(true);

    const env = await world.run("run7-box1", {
      commandId: "c1",
      command: {
        type: "script",
        script: [
          'echo "run=$CLUSTERCODE_RUN_ID cwd=$(pwd) branch=$(git branch --show-current)"',
          'echo "secret=$FAKE_SECRET length=${#FAKE_SECRET} other=${OTHER_SECRET:-unset} token=${CLUSTERCODE_DEVBOX_TOKEN:-unset}"',
          'cat "$CLUSTERCODE_BRIEF_FILE"',
          "echo changed > file.txt",
        ].join("\n"),
      },
      files: { brief },
    });
    expect(env.exitCode).toBe(0);
    expect(env.output).toContain(`run=run7 cwd=${checkout} branch=clustercode/7-1`);
    // The command has the secret; its value is masked in what it reports and in the log.
    expect(env.output).toContain("secret=*** length=6 other=unset token=unset");
    const agentLog = readFileSync(world.executor.paths("run7-box1").logFile, "utf8");
    expect(agentLog).toContain("setting up with ***");
    expect(agentLog).toContain("secret=*** length=6");
    expect(agentLog).not.toContain("s3cret");
    expect(env.output).toContain(brief);

    const failing = await world.run("run7-box1", {
      commandId: "c2",
      command: { type: "script", script: "false | true\necho not reached" },
    });
    expect(failing.exitCode).toBe(1);
    expect(failing.output).not.toContain("not reached");

    const fakeAgent = join(root, "fake-agent.mjs");
    writeFileSync(
      fakeAgent,
      `import { readFileSync, writeFileSync } from "node:fs";
const [promptArg, , model] = process.argv.slice(2);
const promptFile = promptArg.slice("--prompt-file=".length);
writeFileSync("agent-output.txt", "model=" + model + "\\n");
console.log("prompt file: " + promptFile);
console.log("prompt: " + readFileSync(promptFile, "utf8"));
console.log("brief: " + readFileSync(process.env.CLUSTERCODE_BRIEF_FILE, "utf8"));
console.error("progress on stderr");
console.log(JSON.stringify({ type: "turn", usage: { cost_usd: 0.01 } }));
console.log(JSON.stringify({ type: "result", usage: { cost_usd: 0.42, input_tokens: 1200, output_tokens: 80 } }));
`,
    );
    const agent = await world.run("run7-box1", {
      commandId: "c3",
      command: {
        type: "agent",
        argv: [process.execPath, fakeAgent, "--prompt-file={prompt_file}", "--model", "{model}"],
        prompt: `Work on this: ${brief}`,
        model: "fake-1",
        costJsonPath: "usage.cost_usd",
        usageJsonPath: "usage",
      },
      files: { brief },
    });
    expect(agent.exitCode).toBe(0);
    expect(agent.costUsd).toBe(0.42);
    expect(agent.usage).toEqual({ inputTokens: 1200, outputTokens: 80 });
    expect(agent.output).toContain(`prompt: Work on this: ${brief}`);
    expect(agent.output).toContain(`brief: ${brief}`);
    expect(agent.output).toContain("progress on stderr");
    const promptFile = /prompt file: (.*)/.exec(agent.output)?.[1] ?? "";
    expect(promptFile).not.toBe("");
    expect(promptFile.startsWith(checkout)).toBe(false);
    expect(existsSync(marker)).toBe(false);

    const saved = await world.run("run7-box1", {
      commandId: "c4",
      command: { type: "checkpoint", message: `Checkpoint: ${brief}` },
    });
    expect(saved.exitCode).toBe(0);
    const log = git(source, "log", "-1", "--format=%H|%an <%ae>|%s", "clustercode/7-1");
    expect(log).toBe(
      `${saved.sha}|ClusterCode <clustercode@users.noreply.github.com>|Checkpoint: ${brief}`,
    );
    const files = git(source, "ls-tree", "--name-only", "clustercode/7-1").split("\n");
    expect(files.sort()).toEqual(["README.md", "agent-output.txt", "file.txt"]);
    expect(git(source, "show", "clustercode/7-1:agent-output.txt")).toBe("model=fake-1");

    const again = await world.run("run7-box1", {
      commandId: "c5",
      command: { type: "checkpoint", message: "nothing changed" },
    });
    expect(again).toMatchObject({ exitCode: 0, sha: saved.sha });
    expect(existsSync(marker)).toBe(false);
  });

  it.each([
    [0, "1"],
    [1000, "unset"],
  ])(
    "tells Claude Code its DevBox is a sandbox (IS_SANDBOX) only when it runs as root: uid %i gives %s",
    async (uid, expected) => {
      world = new World();
      const executor = new LocalExecutor({
        stateDir: world.stateDir,
        graceMs: 2000,
        uid,
        sandbox: { unsafe: true },
        env: {
          ...process.env,
          CLUSTERCODE_DEVBOX_HEARTBEAT_MS: "200",
          IS_SANDBOX: "",
        },
      });
      try {
        await world.start(`sandbox-${uid}`, {}, executor);
        const result = await world.run(`sandbox-${uid}`, {
          commandId: "c1",
          command: { type: "script", script: 'echo "IS_SANDBOX=${IS_SANDBOX:-unset}"' },
        });
        expect(result.output).toBe(`IS_SANDBOX=${expected}\n`);
      } finally {
        await executor.stopAll();
      }
    },
  );

  it("reports setup failures as a failed ready, with the output", async () => {
    world = new World();
    const ready = await world.start("run7-box2", { setup: ["echo about to fail", "exit 3"] });
    expect(ready).toMatchObject({ ok: false });
    expect(ready.type === "devbox.ready" && ready.error).toMatch(
      /^setup command 2 \(exit 3\) exited with 3\n[^]*about to fail/,
    );
    expect(await waitForExit(world.agentPid("run7-box2"), 3000)).toBe(true);
  });

  it("is lost when killed mid-command, and a restarted agent never reruns that command", async () => {
    world = new World();
    await world.start("run7-box3");
    const once: CommandRequest = {
      commandId: "c0",
      command: { type: "script", script: "echo ran >> .git/ran-count; echo once" },
    };
    const first = await world.run("run7-box3", once);
    world.hub.dispatch("run7-box3", sleepCommand("c1"));
    const command = await world.runningCommand("run7-box3");
    process.kill(world.agentPid("run7-box3"), "SIGKILL");
    const lost = await world.waitFor((event) => event.type === "devbox.lost");
    expect(lost).toEqual({
      type: "devbox.lost",
      devboxId: "run7-box3",
      reason: "heartbeat-lapsed",
      runningCommandId: "c1",
    });
    // The orphaned command is still running until the executor stops the DevBox.
    expect(await isAlive(command.pid)).toBe(true);
    await world.executor.stop("run7-box3");
    expect(await isAlive(command.pid)).toBe(false);

    // A new runtime process (new hub, new executor) starts the same DevBox in the same checkout.
    await world.hub.close();
    const restarted = new World();
    const executor = new LocalExecutor({
      stateDir: world.stateDir,
      env: { ...process.env, CLUSTERCODE_DEVBOX_HEARTBEAT_MS: "200" },
    });
    try {
      await restarted.start("run7-box3", {}, executor);
      // A finished command is answered from the journal, not run again...
      expect(await restarted.run("run7-box3", once)).toEqual(first);
      const { checkout } = world.executor.paths("run7-box3");
      expect(readFileSync(join(checkout, ".git", "ran-count"), "utf8")).toBe("ran\n");
      // ...and one that was cut off is reported interrupted, not run again.
      const result = await restarted.run("run7-box3", sleepCommand("c1"));
      expect(result).toMatchObject({ commandId: "c1", exitCode: 125, interrupted: true });
      expect(result.output).toMatch(/already started .* its outcome is unknown/);
    } finally {
      await executor.stop("run7-box3");
      await restarted.dispose();
    }
  });

  it("exits by itself, killing its command, when its hub goes away", async () => {
    world = new World();
    await world.start("run7-box4");
    world.hub.dispatch("run7-box4", sleepCommand("c1"));
    const command = await world.runningCommand("run7-box4");
    const pid = world.agentPid("run7-box4");
    await world.hub.close();
    expect(await waitForExit(pid, 6000)).toBe(true);
    expect(await waitForExit(command.pid, 3000)).toBe(true);
    const log = readFileSync(world.executor.paths("run7-box4").logFile, "utf8");
    expect(log).toContain("the API was unreachable for over 1500 ms; exiting");
  });

  it("exits when released, killing its command", async () => {
    world = new World();
    await world.start("run7-box5");
    world.hub.dispatch("run7-box5", sleepCommand("c1"));
    const command = await world.runningCommand("run7-box5");
    const pid = world.agentPid("run7-box5");
    world.hub.release("run7-box5");
    expect(await waitForExit(pid, 3000)).toBe(true);
    expect(await waitForExit(command.pid, 3000)).toBe(true);
  });

  it("starts once, and stop kills the agent and its command", async () => {
    world = new World();
    await world.start("run7-box6");
    const pid = world.agentPid("run7-box6");
    await world.start("run7-box6");
    expect(world.agentPid("run7-box6")).toBe(pid);
    world.hub.dispatch("run7-box6", sleepCommand("c1"));
    const command = await world.runningCommand("run7-box6");
    await world.executor.stop("run7-box6");
    expect(await isAlive(pid)).toBe(false);
    expect(await isAlive(command.pid)).toBe(false);
    expect(existsSync(world.executor.paths("run7-box6").pidFile)).toBe(false);
    await world.executor.stop("run7-box6");
  });

  it("reaps the DevBoxes a crashed runtime process left behind", async () => {
    world = new World();
    await world.start("run7-box7");
    world.hub.dispatch("run7-box7", sleepCommand("c1"));
    const command = await world.runningCommand("run7-box7");
    const pid = world.agentPid("run7-box7");
    const successor = world.newExecutor();
    expect(await successor.reap()).toEqual(["run7-box7"]);
    expect(await isAlive(pid)).toBe(false);
    expect(await isAlive(command.pid)).toBe(false);
    expect(await successor.reap()).toEqual([]);
  });
});
