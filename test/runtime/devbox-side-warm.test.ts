/**
 * The DevBox side as the app opens it with the ECS executor: the hub's warm identities reach the
 * executor (made before the hub), and closing the side stops the warm tasks.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { EcsExecutor } from "../../src/devbox/ecs/executor.js";
import { WARM_STARTED_BY } from "../../src/devbox/ecs/warm-orphans.js";
import { openDevBoxSide } from "../../src/runtime/devbox-side.js";
import { decodeSettings } from "../../src/settings/index.js";
import { FakeEcs, NO_PROCESS, TEST_CLUSTER, ecsClientOf } from "../devbox/ecs/endpoint.js";
import { useTestDynamo } from "../store/dynalite-fixture.js";

const dynamo = useTestDynamo();
let fake: FakeEcs | undefined;
let root: string | undefined;

afterEach(async () => {
  await fake?.close();
  if (root !== undefined) rmSync(root, { recursive: true, force: true });
});

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 2000 && !check(); i++) await new Promise((done) => setTimeout(done, 5));
  if (!check()) throw new Error("timed out");
}

describe("the DevBox side with warm ECS tasks", () => {
  it("attaches the hub's warm identities to the executor and stops the warm tasks on close", async () => {
    fake = new FakeEcs(NO_PROCESS);
    const endpoint = await fake.listen();
    root = mkdtempSync(join(tmpdir(), "devbox-side-warm-"));
    const executor = new EcsExecutor({
      client: ecsClientOf(endpoint, { maxAttempts: 1 }),
      ...TEST_CLUSTER,
      defaultImage: "devbox:1",
      pollIntervalMs: 60_000,
      warm: { max: 2, refillDelayMs: 0 },
    });
    const errors: unknown[] = [];
    const upstream = () => Promise.resolve({ url: "/nowhere", env: {} });
    const side = await openDevBoxSide(
      {
        stateDir: root,
        env: {},
        providers: decodeSettings({}).providers,
        store: await dynamo.newStore(),
        executor,
        upstreamOf: upstream,
        repoUpstreamOf: upstream,
        onError: (error) => errors.push(error),
      },
      { onHubEvent: () => undefined },
    );
    try {
      await until(() => executor.warm !== undefined);
      const devboxId = "r1.a.1";
      const { token } = side.hub.register({ devboxId, runId: "r1" });
      await executor.start({
        devboxId,
        runId: "r1",
        apiUrl: side.hub.url,
        token,
        spec: {
          branch: "clustercode/1-r1",
          baseBranch: "main",
          setup: [],
          secrets: [],
          warm: { count: 1, branch: "main" },
        },
        repository: side.hub.gitUrl(devboxId, "acme/widgets"),
        repo: "acme/widgets",
      });
      await executor.warm!.settled();
      const warm = () => [...fake!.tasks.values()].filter((t) => t.startedBy === WARM_STARTED_BY);
      expect(warm().map((task) => task.lastStatus)).toEqual(["RUNNING"]);
      // The warm task waits on this side's hub.
      expect(warm()[0]!.environment.CLUSTERCODE_API_URL).toBe(side.hub.url);
    } finally {
      await side.close();
      executor.close();
    }
    const warmTasks = [...fake.tasks.values()].filter((t) => t.startedBy === WARM_STARTED_BY);
    expect(warmTasks.map((task) => task.lastStatus)).toEqual(["STOPPED"]);
    expect(errors).toEqual([]);
  });
});
