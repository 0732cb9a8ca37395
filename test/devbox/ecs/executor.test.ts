import { ClusterNotFoundException, ServerException } from "@aws-sdk/client-ecs";
import { afterEach, describe, expect, it } from "vitest";
import type { DevBoxSpec } from "../../../src/engine/commands.js";
import { EcsError, toEcsError } from "../../../src/devbox/ecs/error.js";
import { EcsExecutor, type EcsExecutorOptions } from "../../../src/devbox/ecs/executor.js";
import { clientTokenOf } from "../../../src/devbox/ecs/names.js";
import type { EcsStatus } from "../../../src/devbox/ecs/status.js";
import { secretArn } from "../../../src/devbox/ecs/task-definitions.js";
import type { StartRequest } from "../../../src/devbox/executor.js";
import { FakeEcs, NO_PROCESS, ecsClientOf } from "./endpoint.js";
import { ReportWaiters } from "./report-waiters.js";

const PREFIX = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:";
const spec: DevBoxSpec = {
  branch: "clustercode/7-r1",
  baseBranch: "main",
  setup: ["npm ci"],
  secrets: ["NPM_TOKEN"],
  cpu: 2,
  memoryMiB: 4096,
};
const request = (devboxId: string, overrides: Partial<StartRequest> = {}): StartRequest => ({
  devboxId,
  runId: "r1",
  apiUrl: "http://10.0.0.5:8080",
  token: "per-devbox-token",
  repository: "acme/widgets",
  spec,
  env: { NPM_TOKEN: "secret-value-must-not-travel" },
  ...overrides,
});

let fake: FakeEcs;
const executors: EcsExecutor[] = [];
afterEach(async () => {
  for (const executor of executors.splice(0)) executor.close();
  await fake.close();
});

async function setup(options: Partial<EcsExecutorOptions> = {}) {
  fake = new FakeEcs(NO_PROCESS);
  const endpoint = await fake.listen();
  const statuses: EcsStatus[] = [];
  const lost: [string, string][] = [];
  const changes = new ReportWaiters();
  const make = () => {
    const executor = new EcsExecutor({
      client: ecsClientOf(endpoint, { maxAttempts: 1 }),
      cluster: "devboxes",
      capacityProvider: "devbox-asg",
      executionRoleArn: "arn:aws:iam::123456789012:role/devbox-execution",
      taskRoleArn: "arn:aws:iam::123456789012:role/devbox-task",
      defaultImage: "123456789012.dkr.ecr.eu-west-1.amazonaws.com/devbox:1",
      region: "eu-west-1",
      secretArnPrefix: PREFIX,
      subnets: ["subnet-1", "subnet-2"],
      securityGroups: ["sg-1"],
      placement: { attempts: 3, baseDelayMs: 10, maxDelayMs: 20 },
      pollIntervalMs: 60_000,
      onStatus: (status) => {
        statuses.push(status);
        changes.notify();
      },
      onLost: (devboxId, reason) => {
        lost.push([devboxId, reason]);
        changes.notify();
      },
      ...options,
    });
    executors.push(executor);
    return executor;
  };
  return {
    executor: make(),
    make,
    statuses,
    lost,
    until: (check: () => boolean) => changes.until(check),
  };
}

describe("EcsExecutor", () => {
  it("gives the task the hub's placeholder provider key and proxy URL, never a provider secret", async () => {
    const { executor } = await setup();
    const providerEnv = {
      ANTHROPIC_API_KEY: "clustercode-placeholder",
      ANTHROPIC_BASE_URL: "http://10.0.0.5:8080/internal/devboxes/r1-d2/providers/anthropic",
    };
    await executor.start(request("r1-d2", { providerEnv }));
    const [run] = fake.sent("RunTask");
    expect(run).toMatchObject({
      overrides: {
        containerOverrides: [
          {
            environment: expect.arrayContaining(
              Object.entries(providerEnv).map(([name, value]) => ({ name, value })),
            ) as unknown,
          },
        ],
      },
    });
    const [definition] = fake.sent("RegisterTaskDefinition");
    const [container] = (definition?.containerDefinitions ?? []) as {
      secrets: { name: string }[];
    }[];
    const secrets = container?.secrets ?? [];
    expect(secrets.map((secret) => secret.name)).toEqual(["NPM_TOKEN"]);
  });

  it("runs the DevBox on the capacity provider with only the run's settings in overrides", async () => {
    const { executor, statuses } = await setup();
    await executor.start(request("r1-d1"));
    const [run] = fake.sent("RunTask");
    expect(run).toMatchObject({
      cluster: "devboxes",
      capacityProviderStrategy: [{ capacityProvider: "devbox-asg", weight: 1 }],
      // Instances already up (their image cached) are filled first.
      placementStrategy: [{ type: "binpack", field: "memory" }],
      clientToken: "r1-d1",
      startedBy: "clustercode/r1-d1",
      tags: [
        { key: "clustercode:run", value: "r1" },
        { key: "clustercode:devbox", value: "r1-d1" },
      ],
      networkConfiguration: {
        awsvpcConfiguration: {
          subnets: ["subnet-1", "subnet-2"],
          securityGroups: ["sg-1"],
          assignPublicIp: "DISABLED",
        },
      },
    });
    expect(run?.launchType).toBeUndefined();
    expect(run?.overrides).toEqual({
      containerOverrides: [
        {
          name: "devbox",
          environment: [
            { name: "CLUSTERCODE_RUN_ID", value: "r1" },
            { name: "CLUSTERCODE_DEVBOX_TOKEN", value: "per-devbox-token" },
            { name: "CLUSTERCODE_BRANCH", value: "clustercode/7-r1" },
            { name: "CLUSTERCODE_BASE_BRANCH", value: "main" },
            { name: "CLUSTERCODE_SETUP", value: '["npm ci"]' },
            { name: "CLUSTERCODE_SECRET_NAMES", value: '["NPM_TOKEN"]' },
            { name: "CLUSTERCODE_API_URL", value: "http://10.0.0.5:8080" },
            { name: "CLUSTERCODE_DEVBOX_ID", value: "r1-d1" },
            { name: "CLUSTERCODE_REPOSITORY", value: "https://github.com/acme/widgets.git" },
          ],
        },
      ],
    });
    expect(JSON.stringify(fake.requests)).not.toContain("secret-value-must-not-travel");
    expect(statuses).toEqual([
      { state: "started", devboxId: "r1-d1", taskArn: [...fake.tasks.keys()][0] },
    ]);

    const [definition] = fake.sent("RegisterTaskDefinition");
    expect(definition).toMatchObject({
      family: expect.stringMatching(/^clustercode-devbox-[0-9a-f]{20}$/) as unknown,
      requiresCompatibilities: ["EC2"],
      networkMode: "awsvpc",
      cpu: "2048",
      memory: "4096",
      executionRoleArn: "arn:aws:iam::123456789012:role/devbox-execution",
      taskRoleArn: "arn:aws:iam::123456789012:role/devbox-task",
      containerDefinitions: [
        {
          name: "devbox",
          image: "123456789012.dkr.ecr.eu-west-1.amazonaws.com/devbox:1",
          secrets: [
            { name: "NPM_TOKEN", valueFrom: `${PREFIX}clustercode/acme/widgets/NPM_TOKEN` },
          ],
        },
      ],
    });
  });

  it("gives the task devbox.cache but no cache directory: its agent keeps it through the hub", async () => {
    const { executor } = await setup();
    const cache = [{ key: ["package-lock.json"], paths: ["node_modules"] }];
    await executor.start(request("r1-d1", { spec: { ...spec, cache } }));
    const [run] = fake.sent("RunTask");
    const overrides = run?.overrides as {
      containerOverrides: { environment: { name: string; value: string }[] }[];
    };
    const environment = overrides.containerOverrides[0]?.environment ?? [];
    const names = environment.map((pair) => pair.name);
    expect(environment).toContainEqual({
      name: "CLUSTERCODE_SETUP_CACHE",
      value: JSON.stringify(cache),
    });
    expect(names).not.toContain("CLUSTERCODE_SETUP_CACHE_DIRS");
  });

  it("registers a task definition once per (image, cpu, memory, secrets) and reuses it", async () => {
    const { executor, make } = await setup();
    await executor.start(request("r1-d1"));
    await executor.start(request("r1-d2"));
    await executor.start(request("r1-d3", { spec: { ...spec, memoryMiB: 8192 } }));
    await make().start(request("r2-d1", { runId: "r2" }));
    const families = fake.sent("RegisterTaskDefinition").map((body) => body.family);
    expect(families).toHaveLength(2);
    expect(new Set(families).size).toBe(2);
    // The second replica found the definition with DescribeTaskDefinition.
    expect(fake.sent("DescribeTaskDefinition")).toHaveLength(3);
    const used = new Set(fake.sent("RunTask").map((body) => body.taskDefinition));
    expect(used.size).toBe(2);
  });

  it("gives one task for a duplicate dispatch, from this process or another", async () => {
    const { executor, make } = await setup();
    const other = make();
    await Promise.all([
      executor.start(request("r1-d1")),
      executor.start(request("r1-d1")),
      other.start(request("r1-d1")),
    ]);
    await make().start(request("r1-d1"));
    expect(fake.tasks.size).toBe(1);
    expect(new Set(fake.sent("RunTask").map((body) => body.clientToken))).toEqual(
      new Set(["r1-d1"]),
    );
  });

  it("hashes a client token longer than 64 characters", () => {
    const id = `run-${"x".repeat(80)}-d12`;
    expect(clientTokenOf(id)).toMatch(/^[0-9a-f]{64}$/);
    expect(clientTokenOf(id)).toBe(clientTokenOf(id));
    expect(clientTokenOf(id, 1)).not.toBe(clientTokenOf(id));
    expect(clientTokenOf("r1-d1", 2)).toBe("r1-d1.p2");
  });

  it("retries placement failures with backoff and says so, then gives up as lost", async () => {
    const { executor, statuses, lost, until } = await setup();
    fake.placementFailures.push([{ reason: "RESOURCE:MEMORY" }], [{ reason: "RESOURCE:CPU" }]);
    await executor.start(request("r1-d1"));
    await until(() => statuses.some((status) => status.state === "started"));
    expect(fake.tasks.size).toBe(1);
    expect(statuses.map((status) => status.state)).toEqual([
      "waiting-for-capacity",
      "waiting-for-capacity",
      "started",
    ]);
    expect(statuses[0]).toMatchObject({ reason: "RESOURCE:MEMORY", attempt: 1, retryInMs: 10 });
    expect(fake.sent("RunTask").map((body) => body.clientToken)).toEqual([
      "r1-d1",
      "r1-d1.p1",
      "r1-d1.p2",
    ]);

    const reason = [{ reason: "RESOURCE:MEMORY", arn: "arn:instance/1" }];
    fake.placementFailures.push(reason, reason, reason);
    await executor.start(request("r1-d2"));
    await until(() => lost.length === 1);
    expect(lost[0]).toEqual(["r1-d2", "no capacity after 3 placement attempts: RESOURCE:MEMORY"]);
  });

  it("stop cancels a waiting placement", async () => {
    const { executor } = await setup({ placement: { attempts: 3, baseDelayMs: 200 } });
    fake.placementFailures.push([{ reason: "RESOURCE:MEMORY" }]);
    await executor.start(request("r1-d1"));
    await executor.stop("r1-d1");
    await new Promise((r) => setTimeout(r, 300));
    expect(fake.sent("RunTask")).toHaveLength(1);
    expect(fake.tasks.size).toBe(0);
  });

  it("reports a task that stopped on its own as lost, not one it stopped", async () => {
    const { executor, lost, statuses } = await setup();
    await executor.start(request("r1-d1"));
    await executor.start(request("r1-d2"));
    const [first, second] = [...fake.tasks.keys()] as [string, string];
    await executor.poll();
    expect(lost).toEqual([]);
    await fake.interrupt(first, "SpotInterruption", "Your Spot Task was interrupted.");
    await executor.stop("r1-d2");
    await executor.poll();
    await executor.poll();
    expect(lost).toEqual([["r1-d1", "SpotInterruption: Your Spot Task was interrupted."]]);
    expect(statuses.at(-1)).toMatchObject({ state: "stopped", devboxId: "r1-d1", taskArn: first });
    expect(fake.sent("StopTask")).toEqual([
      { cluster: "devboxes", task: second, reason: "released by clustercode" },
    ]);
  });

  it("stops a task another process started, and is quiet about unknown ones", async () => {
    const { executor, make } = await setup();
    await executor.start(request("r1-d1"));
    await make().stop("r1-d1");
    expect([...fake.tasks.values()][0]).toMatchObject({ lastStatus: "STOPPED" });
    await make().stop("r1-d9");
    expect(fake.sent("StopTask")).toHaveLength(1);
  });

  it("maps ECS errors to EcsError by name", async () => {
    const { executor } = await setup({ cluster: "missing" });
    const error = await executor.start(request("r1-d1")).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(EcsError);
    expect(error).toMatchObject({ code: "not_found", retryable: false });
    const failed = new ServerException({ message: "oops", $metadata: {} });
    expect(toEcsError(failed, "RunTask")).toMatchObject({ code: "unavailable", retryable: true });
    const throttled = Object.assign(new Error("slow down"), { name: "ThrottlingException" });
    expect(toEcsError(throttled, "RunTask")).toMatchObject({ code: "throttled", retryable: true });
    const missing = new ClusterNotFoundException({ message: "x", $metadata: {} });
    expect(toEcsError(missing, "RunTask").code).toBe("not_found");
    const refused = Object.assign(new Error("connect"), { code: "ECONNREFUSED" });
    expect(toEcsError(refused, "RunTask")).toMatchObject({ code: "unavailable", retryable: true });
    expect(toEcsError("odd", "RunTask").code).toBe("unknown");
  });

  it("tries again after a failed start, and refuses secrets without a GitHub repository", async () => {
    const { executor } = await setup();
    const local = request("r1-d1", { repository: "/srv/repos/widgets" });
    await expect(executor.start(local)).rejects.toMatchObject({
      name: "EcsError",
      code: "invalid_request",
      message: "this DevBox needs secrets but its repository is not a GitHub owner/name",
    });
    await executor.start({ ...local, spec: { ...spec, secrets: [] } });
    expect(fake.tasks.size).toBe(1);
  });

  it("reports a task ECS no longer knows as lost", async () => {
    const { executor, lost } = await setup();
    await executor.start(request("r1-d1"));
    fake.tasks.clear();
    await executor.poll();
    expect(lost).toEqual([["r1-d1", "the task is gone (MISSING)"]]);
  });

  it("never builds a secret ARN outside the repository's prefix", () => {
    const repo = { owner: "acme", name: "widgets" };
    expect(secretArn(PREFIX, repo, "NPM_TOKEN")).toBe(
      `${PREFIX}clustercode/acme/widgets/NPM_TOKEN`,
    );
    for (const name of ["../other/KEY", "A/B", "", "X*"]) {
      expect(() => secretArn(PREFIX, repo, name)).toThrow(EcsError);
    }
    expect(() => secretArn(PREFIX, { owner: "acme", name: ".." }, "K")).toThrow(/not a GitHub/);
    expect(() => secretArn(PREFIX, { owner: "a/b", name: "c" }, "K")).toThrow(/not a GitHub/);
  });
});
