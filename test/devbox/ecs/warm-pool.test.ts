/**
 * The ECS executor's warm tasks against the loopback ECS endpoint and a real hub, with no task
 * processes: each warm task's agent is played here over HTTP (ready, then the claim long-poll).
 */
import { RegisterTaskDefinitionCommand, RunTaskCommand } from "@aws-sdk/client-ecs";
import { afterEach, describe, expect, it } from "vitest";
import type { DevBoxSpec } from "../../../src/engine/commands.js";
import { EcsExecutor } from "../../../src/devbox/ecs/executor.js";
import type { EcsWarmOptions } from "../../../src/devbox/ecs/warm-tasks.js";
import { startedByOf } from "../../../src/devbox/ecs/names.js";
import {
  stopOrphanWarmTasks,
  WARM_HUB_TAG,
  WARM_STARTED_BY,
} from "../../../src/devbox/ecs/warm-orphans.js";
import type { StartRequest } from "../../../src/devbox/executor.js";
import { DevBoxHub } from "../../../src/devbox/hub/hub.js";
import { warmRoute } from "../../../src/devbox/warm-protocol.js";
import { WarmDemand } from "../../../src/devbox/warm-demand.js";
import { FakeEcs, NO_PROCESS, type FakeTask, TEST_CLUSTER, ecsClientOf } from "./endpoint.js";

const spec = (overrides: Partial<DevBoxSpec> = {}): DevBoxSpec => ({
  branch: "clustercode/7-r1",
  baseBranch: "main",
  setup: ["npm ci"],
  secrets: [],
  warm: { count: 1, branch: "main" },
  ...overrides,
});

let fake: FakeEcs;
let hub: DevBoxHub;
let executor: EcsExecutor;
const client = (endpoint: string) => ecsClientOf(endpoint, { maxAttempts: 1 });

afterEach(async () => {
  await executor.stopWarm();
  executor.close();
  await fake.close();
  await hub.close();
});

async function setup(warm: Partial<EcsWarmOptions> = {}) {
  fake = new FakeEcs(NO_PROCESS);
  const endpoint = await fake.listen();
  hub = new DevBoxHub({
    onEvent: () => undefined,
    warm: { stateDir: "/nonexistent", upstreamOf: () => Promise.reject(new Error("no git")) },
  });
  await hub.listen();
  const failures: unknown[] = [];
  executor = new EcsExecutor({
    client: client(endpoint),
    ...TEST_CLUSTER,
    defaultImage: "devbox:1",
    pollIntervalMs: 60_000,
    warm: {
      max: 4,
      handoverMs: 5000,
      refillDelayMs: 0,
      onError: (error) => failures.push(error),
      ...warm,
    },
  });
  await executor.attachWarm(hub.warmIdentities!, hub.url);
  return { endpoint, failures };
}

let claims = 0;
function claim(repo = "acme/widgets", specOverrides: Partial<DevBoxSpec> = {}): StartRequest {
  const devboxId = `r${++claims}.a.1`;
  const { token } = hub.register({ devboxId, runId: `r${claims}` });
  return {
    devboxId,
    runId: `r${claims}`,
    apiUrl: hub.url,
    token,
    spec: spec(specOverrides),
    repository: hub.gitUrl(devboxId, repo),
    repo,
  };
}

const warmTasks = () => [...fake.tasks.values()].filter((t) => t.startedBy === WARM_STARTED_BY);
const running = (tasks: FakeTask[]) => tasks.filter((task) => task.lastStatus === "RUNNING");

/** Plays a warm task's agent: reports ready; `poll` then waits for its claim. */
async function playReady(task: FakeTask, wait = 20) {
  const { CLUSTERCODE_WARM_ID: warmId = "", CLUSTERCODE_WARM_TOKEN: token = "" } = task.environment;
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  const response = await fetch(`${hub.url}${warmRoute(warmId, "ready")}`, {
    method: "POST",
    headers,
    body: JSON.stringify({ sha: "b".repeat(40), setUp: true }),
  });
  expect(response.status).toBe(200);
  return {
    poll: async () =>
      (await fetch(`${hub.url}${warmRoute(warmId, "claim")}?wait=${wait}`, { headers })).json(),
  };
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 2000 && !check(); i++) await new Promise((done) => setTimeout(done, 5));
  if (!check()) throw new Error("timed out");
}

describe("warm ECS tasks", () => {
  it("hands a claim to a ready task: its DevBox's token and environment, no RunTask", async () => {
    await setup();
    await executor.start(claim());
    await executor.warm!.settled();
    const [task] = warmTasks();
    const agent = await playReady(task!);
    const waiting = agent.poll();
    await until(() => hub.warmIdentities!.isReady(task!.environment.CLUSTERCODE_WARM_ID ?? ""));
    const request = claim();
    await executor.start(request);
    const answer = (await waiting) as { claim: { devboxId: string; token: string; env: object } };
    expect(answer.claim).toMatchObject({ devboxId: request.devboxId, token: request.token });
    expect(answer.claim.env).toMatchObject({
      CLUSTERCODE_BRANCH: "clustercode/7-r1",
      CLUSTERCODE_REPOSITORY: request.repository,
    });
    // The token travels as the claim's token only, not among the environment.
    expect(Object.keys(answer.claim.env)).not.toContain("CLUSTERCODE_DEVBOX_TOKEN");
    expect(fake.sent("RunTask").map((run) => run.startedBy)).not.toContain(
      startedByOf(request.devboxId),
    );
    // The handed task is the DevBox's now: stopping the DevBox stops it.
    await executor.stop(request.devboxId);
    expect(fake.tasks.get(task!.taskArn)?.lastStatus).toBe("STOPPED");
  });

  it("fills a pool the default branch declares before any claim; its first claim takes it", async () => {
    const demand = new WarmDemand();
    const declared = {
      repo: "acme/widgets",
      branch: "main",
      count: 1,
      setup: ["npm ci"],
      secrets: [],
    };
    demand.declare("acme/widgets", [declared]);
    await setup({ demand });
    await executor.warm!.settled();
    const [task] = warmTasks();
    expect(task?.environment.CLUSTERCODE_WARM_ID).toBeTruthy();
    const agent = await playReady(task!);
    const waiting = agent.poll();
    await until(() => hub.warmIdentities!.isReady(task!.environment.CLUSTERCODE_WARM_ID ?? ""));
    const request = claim();
    await executor.start(request);
    expect(((await waiting) as { claim: { devboxId: string } }).claim.devboxId).toBe(
      request.devboxId,
    );
    expect(fake.sent("RunTask").map((run) => run.startedBy)).not.toContain(
      startedByOf(request.devboxId),
    );
    // The pool refilled; a push whose workflows no longer ask for warm stops what it holds,
    // and leaves the claimed task (the DevBox's now) running.
    await executor.warm!.settled();
    const refill = () => warmTasks().filter((each) => each.taskArn !== task!.taskArn);
    expect(running(refill())).toHaveLength(1);
    demand.declare("acme/widgets", []);
    await executor.warm!.settled();
    expect(running(refill())).toEqual([]);
    expect(fake.tasks.get(task!.taskArn)?.lastStatus).toBe("RUNNING");
  });

  it("keeps no warm task of a spec with secrets or a repository off GitHub, nor past the cap", async () => {
    await setup({ max: 1 });
    await executor.start(claim("acme/widgets", { secrets: ["NPM_TOKEN"] }));
    await executor.start(claim("/srv/repositories/widgets"));
    await executor.warm!.settled();
    expect(warmTasks()).toEqual([]);
    await executor.start(claim("acme/widgets"));
    await executor.start(claim("acme/other"));
    await executor.warm!.settled();
    expect(warmTasks()).toHaveLength(1);
  });

  it("starts cold when the ready task does not take the claim, and stops that task", async () => {
    await setup({ handoverMs: 50 });
    await executor.start(claim());
    await executor.warm!.settled();
    const [task] = warmTasks();
    // It reports ready and polls once, then never comes back for the claim.
    const agent = await playReady(task!, 0);
    expect(await agent.poll()).toEqual({ wait: true });
    const request = claim();
    await executor.start(request);
    expect(fake.sent("RunTask").map((run) => run.startedBy)).toContain(
      startedByOf(request.devboxId),
    );
    await executor.warm!.settled();
    expect(fake.tasks.get(task!.taskArn)?.lastStatus).toBe("STOPPED");
    // Its identity is revoked: a late poll cannot take anything.
    const { CLUSTERCODE_WARM_ID: warmId = "", CLUSTERCODE_WARM_TOKEN: token = "" } =
      task!.environment;
    const late = await fetch(`${hub.url}${warmRoute(warmId, "claim")}?wait=0`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(late.status).toBe(401);
  });

  it("replaces a warm task that stopped on its own, lets an idle pool go, stops all on close", async () => {
    let now = 0;
    await setup({ idleMs: 1000, now: () => now });
    await executor.start(claim());
    await executor.warm!.settled();
    const [first] = warmTasks();
    await fake.interrupt(first!.taskArn, "SpotInterruption", "gone");
    await executor.poll();
    await executor.warm!.settled();
    expect(running(warmTasks())).toHaveLength(1);

    // An hour of nobody claiming that spec: the next claim (another spec) lets its pool go.
    now += 2000;
    await executor.start(claim("acme/widgets", { setup: ["make"] }));
    await executor.warm!.settled();
    const byRepoSetup = running(warmTasks()).map((task) => task.environment.CLUSTERCODE_SETUP);
    expect(byRepoSetup).toEqual(['["make"]']);

    await executor.stopWarm();
    expect(running(warmTasks())).toEqual([]);
  });

  it("stops orphaned warm tasks: this hub's address before it, and hubs that do not answer", async () => {
    const { endpoint } = await setup({ max: 0 });
    const ecs = client(endpoint);
    const registered = await ecs.send(
      new RegisterTaskDefinitionCommand({
        family: "clustercode-devbox-x",
        containerDefinitions: [{ name: "devbox", image: "devbox:1" }],
      }),
    );
    const taskDefinition = registered.taskDefinition!.taskDefinitionArn!;
    const other = new DevBoxHub({ onEvent: () => undefined });
    const otherUrl = await other.listen();
    const run = async (hubUrl: string) => {
      const answer = await ecs.send(
        new RunTaskCommand({
          cluster: "devboxes",
          taskDefinition,
          startedBy: WARM_STARTED_BY,
          clientToken: `${hubUrl}-${Math.random()}`,
          tags: [{ key: WARM_HUB_TAG, value: hubUrl }],
          overrides: { containerOverrides: [{ name: "devbox", environment: [] }] },
        }),
      );
      return answer.tasks![0]!.taskArn!;
    };
    try {
      const own = await run(hub.url);
      const dead = await run("http://127.0.0.1:9");
      const live = await run(otherUrl);
      const stopped = await stopOrphanWarmTasks(ecs, "devboxes", hub.url);
      expect(stopped.sort()).toEqual([own, dead].sort());
      expect(fake.tasks.get(live)?.lastStatus).toBe("RUNNING");
    } finally {
      await other.close();
    }
  });
});
