/**
 * Warm ECS tasks end to end: the executor keeps warm tasks on a local endpoint that speaks the
 * ECS JSON protocol and runs each task's DevBox entrypoint and the built agent (`dist/`) as
 * processes, against a real hub; a claim takes a ready one instead of a RunTask.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DefaultBranchMoves } from "../../../src/devbox/branch-moves.js";
import { EcsExecutor } from "../../../src/devbox/ecs/executor.js";
import { startedByOf } from "../../../src/devbox/ecs/names.js";
import { WARM_STARTED_BY } from "../../../src/devbox/ecs/warm-orphans.js";
import type { StartRequest } from "../../../src/devbox/executor.js";
import type { DevBoxEvent } from "../../../src/devbox/hub/events.js";
import { DevBoxHub } from "../../../src/devbox/hub/hub.js";
import type { DevBoxSpec } from "../../../src/engine/commands.js";
import { FakeEcs, TEST_CLUSTER, ecsClientOf } from "./endpoint.js";
import { LocalTaskLauncher } from "./local-tasks.js";

const root = realpathSync(mkdtempSync(join(tmpdir(), "clustercode-ecs-warm-")));
const source = join(root, "source.git");
const seed = join(root, "seed");
const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, { cwd, encoding: "utf8" }).trim();
const commit = (message: string) => {
  writeFileSync(join(seed, "README.md"), `# ${message}\n`);
  git(seed, "add", "README.md");
  git(seed, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", message);
  git(seed, "push", "--quiet", source, "main");
  return git(seed, "rev-parse", "HEAD");
};

beforeAll(() => {
  git(root, "init", "--quiet", "--bare", "--initial-branch=main", source);
  git(root, "init", "--quiet", "--initial-branch=main", seed);
  commit("first");
});
afterAll(() => rm(root, { recursive: true, force: true }));

const spec = (runId: string): DevBoxSpec => ({
  branch: `clustercode/9-${runId}`,
  baseBranch: "main",
  // Setup runs while warm (and cold), and finds no token of any kind in its environment.
  setup: [
    'test -z "${CLUSTERCODE_WARM_TOKEN:-}${CLUSTERCODE_DEVBOX_TOKEN:-}"',
    "echo set-up >> .setup-ran",
  ],
  secrets: [],
  warm: { count: 1, branch: "main" },
});

async function until<T>(what: string, check: () => T | undefined | false): Promise<T> {
  for (let i = 0; i < 2400; i++) {
    const value = check();
    if (value !== undefined && value !== false) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("warm ECS tasks", () => {
  it("hands a claim to a ready warm task, refills, and renews on a default-branch move", async () => {
    const launcher = new LocalTaskLauncher(root, {});
    const fake = new FakeEcs(launcher);
    const endpoint = await fake.listen();
    const events: DevBoxEvent[] = [];
    const failures: unknown[] = [];
    const upstream = () => Promise.resolve({ url: source, env: {} });
    const hub = new DevBoxHub({
      onEvent: (event) => events.push(event),
      onError: (error) => failures.push(error),
      lapseMs: 60_000,
      git: {
        stateDir: join(root, "hub-state"),
        upstreamOf: upstream,
        policyOf: () => Promise.resolve({ runBranch: "", allowWorkflowChanges: false }),
      },
      warm: { stateDir: join(root, "hub-state"), upstreamOf: upstream },
    });
    const moves = new DefaultBranchMoves();
    const executor = new EcsExecutor({
      client: ecsClientOf(endpoint),
      ...TEST_CLUSTER,
      agentEnv: { CLUSTERCODE_DEVBOX_HEARTBEAT_MS: "200", CLUSTERCODE_DEVBOX_LAPSE_MS: "60000" },
      pollIntervalMs: 200,
      warm: { max: 2, moves, onError: (error) => failures.push(error) },
    });
    await hub.listen();
    const claim = (runId: string): StartRequest => {
      const devboxId = `${runId}.a.1`;
      const { token } = hub.register({ devboxId, runId });
      hub.allowEgress(devboxId, undefined);
      return {
        devboxId,
        runId,
        apiUrl: hub.url,
        token,
        spec: spec(runId),
        repository: hub.gitUrl(devboxId, "acme/widgets"),
        repo: "acme/widgets",
        egressProxy: hub.egressProxyUrl(devboxId),
      };
    };
    const ready = (devboxId: string) =>
      events.find((event) => event.type === "devbox.ready" && event.devboxId === devboxId);
    const warmRuns = () => fake.sent("RunTask").filter((run) => run.startedBy === WARM_STARTED_BY);
    const logs = () => [...launcher.dirs.values()].map((dir) => join(dir, "agent.log"));
    try {
      expect(await executor.attachWarm(hub.warmIdentities!, hub.url)).toEqual([]);

      // The first claim of the spec starts cold, and its pool starts a warm task.
      await executor.start(claim("w1"));
      await until("the cold DevBox to be ready", () => ready("w1.a.1"));
      await until("a warm task to be ready", () => executor.warm!.ready === 1);
      expect(warmRuns()).toHaveLength(1);
      const [firstWarm] = warmRuns();
      const overrides = firstWarm!.overrides as {
        containerOverrides: { environment: { name: string }[] }[];
      };
      const names = overrides.containerOverrides[0]!.environment.map((pair) => pair.name);
      // The warm task holds no DevBox token and no DevBox id, only its warm identity.
      expect(names).not.toContain("CLUSTERCODE_DEVBOX_TOKEN");
      expect(names).not.toContain("CLUSTERCODE_DEVBOX_ID");
      expect(names).toContain("CLUSTERCODE_WARM_TOKEN");

      // The second claim takes it: no RunTask of its own, and its first command runs.
      const second = claim("w2");
      await executor.start(second);
      expect(fake.sent("RunTask").some((run) => run.startedBy === startedByOf("w2.a.1"))).toBe(
        false,
      );
      const readyEvent = await until("the warm DevBox to be ready", () => ready("w2.a.1"));
      expect(readyEvent, `task logs: ${logs().join(", ")}`).toMatchObject({ ok: true });
      hub.dispatch("w2.a.1", {
        commandId: "c1",
        command: { type: "script", script: "cat .setup-ran; git rev-parse --abbrev-ref HEAD" },
      });
      const finished = await until("the first command", () =>
        events.find((event) => event.type === "command.finished" && event.devboxId === "w2.a.1"),
      );
      expect(finished).toMatchObject({ result: { exitCode: 0 } });
      const output = (finished as { result: { output: string } }).result.output;
      expect(output).toContain("set-up");
      expect(output).toContain("clustercode/9-w2");
      // The claimed agent skipped the setup its task ran while warm.
      const handed = logs()
        .map((file) => readFileSync(file, "utf8"))
        .find((log) => log.includes("claimed as w2.a.1"));
      expect(handed).toContain("clustercode: set up while warm at");

      // The pool refills: a new warm task, ready for the next claim.
      await until(
        "the pool to refill",
        () => executor.warm!.ready === 1 && warmRuns().length === 2,
      );

      // The default branch moves: the stale warm task is stopped, a new one made at the head.
      const stale = executor.warm!.taskArns;
      const head = commit("second");
      moves.moved("acme/widgets");
      await until("the stale task to stop", () =>
        stale.every((arn) => fake.tasks.get(arn)?.lastStatus === "STOPPED"),
      );
      expect(fake.sent("StopTask").map((stop) => stop.reason)).toContain(
        "the default branch moved",
      );
      await until("a warm task at the new head", () => executor.warm!.ready === 1);
      const third = claim("w3");
      await executor.start(third);
      await until("the third DevBox to be ready", () => ready("w3.a.1"));
      expect(ready("w3.a.1")).toMatchObject({ ok: true, sha: head });
      expect(failures).toEqual([]);
    } finally {
      await executor.stopWarm();
      executor.close();
      await fake.close();
      await hub.close();
    }
  }, 150_000);
});
