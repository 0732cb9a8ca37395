/**
 * The setup cache of ECS DevBoxes, end to end: a real hub keeping the cache (in a directory of
 * the app's host, or in S3 through a loopback fake), the ECS executor against the fake ECS
 * endpoint, and each task's real entrypoint and built agent (`dist/`) as local processes, which
 * see no cache directory. The second DevBox of a run branch restores what the first saved and
 * skips the install.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { DevBoxSpec } from "../../../src/engine/commands.js";
import { EcsExecutor } from "../../../src/devbox/ecs/executor.js";
import type { DevBoxEvent } from "../../../src/devbox/hub/events.js";
import { DevBoxHub } from "../../../src/devbox/hub/hub.js";
import type { SetupCacheStore } from "../../../src/devbox/hub/cache/cache-store.js";
import { DirectoryCacheStore } from "../../../src/devbox/hub/cache/directory-store.js";
import { S3CacheStore, setupCacheS3Client } from "../../../src/devbox/hub/cache/s3-store.js";
import { FakeS3 } from "../hub/fake-s3.js";
import { FakeEcs, type FakeTask, TEST_CLUSTER, ecsClientOf } from "./endpoint.js";
import { LocalTaskLauncher } from "./local-tasks.js";

const RUN_BRANCH = "clustercode/12-cache1";
const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, { cwd, encoding: "utf8" }).trim();

let root: string;
let fakeS3: FakeS3 | undefined;

beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "clustercode-ecs-cache-")));
  const seed = join(root, "seed");
  git(root, "init", "--quiet", "--initial-branch=main", seed);
  writeFileSync(join(seed, "package-lock.json"), '{ "lockfileVersion": 3 }\n');
  git(seed, "add", "package-lock.json");
  git(seed, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", "init");
  git(root, "clone", "--quiet", "--bare", seed, join(root, "source.git"));
});
afterEach(async () => {
  await fakeS3?.close();
  fakeS3 = undefined;
  await rm(root, { recursive: true, force: true });
});

/** The install setup runs on a miss: it writes node_modules and counts itself in a file. */
function spec(): DevBoxSpec {
  const installs = join(root, "installs.log");
  const install = `mkdir -p node_modules/left-pad && echo installed > node_modules/left-pad/index.js && echo ran >> ${installs}`;
  return {
    branch: RUN_BRANCH,
    baseBranch: "main",
    setup: [`[ "$CLUSTERCODE_CACHE_HIT" = true ] || { ${install}; }`],
    cache: [{ key: ["package-lock.json"], paths: ["node_modules"] }],
    secrets: [],
  };
}

const stores = {
  "a directory of the app's host": () =>
    Promise.resolve(
      new DirectoryCacheStore({
        stateDir: join(root, "state"),
        maxBytes: 64 * 1024 * 1024,
        maxEntryBytes: 16 * 1024 * 1024,
      }) as SetupCacheStore,
    ),
  "an S3 bucket": async () => {
    fakeS3 = new FakeS3("setup-cache");
    const endpoint = await fakeS3.listen();
    const credentials = { accessKeyId: "test", secretAccessKey: "test" };
    const client = setupCacheS3Client({ region: "eu-west-1", endpoint, credentials });
    return new S3CacheStore({ client, bucket: "setup-cache", maxEntryBytes: 16 * 1024 * 1024 });
  },
};

async function until<T>(what: string, check: () => T | undefined): Promise<T> {
  for (let i = 0; i < 600; i++) {
    const value = check();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The hub (keeping the cache in `store`, if any), the fake ECS and its tasks' processes. */
async function openHarness(store: SetupCacheStore | undefined) {
  const launcher = new LocalTaskLauncher(root, {});
  const fake = new FakeEcs(launcher);
  const endpoint = await fake.listen();
  const events: DevBoxEvent[] = [];
  const hub = new DevBoxHub({
    onEvent: (event) => events.push(event),
    lapseMs: 60_000,
    ...(store === undefined ? {} : { setupCache: store }),
    // DevBoxes clone through the hub, as on the app; the bare repository stands in for GitHub.
    git: {
      stateDir: join(root, "hub-state"),
      upstreamOf: () => Promise.resolve({ url: join(root, "source.git"), env: {} }),
      policyOf: () => Promise.resolve({ runBranch: RUN_BRANCH, allowWorkflowChanges: false }),
    },
  });
  await hub.listen();
  const executor = new EcsExecutor({
    client: ecsClientOf(endpoint),
    ...TEST_CLUSTER,
    agentEnv: { CLUSTERCODE_DEVBOX_HEARTBEAT_MS: "200", CLUSTERCODE_DEVBOX_LAPSE_MS: "60000" },
    pollIntervalMs: 60_000,
  });
  const logOf = (task: FakeTask) =>
    readFileSync(join(launcher.dirs.get(task.taskArn)!, "agent.log"), "utf8");
  /** Claims one DevBox of the run as the runtime does, waits for it to be ready, releases it. */
  const claim = async (devboxId: string): Promise<FakeTask> => {
    const { token } = hub.register({ devboxId, runId: "cache1" });
    // What the runtime does at a claim: the scopes are its own record, never the DevBox's.
    const repository = hub.gitUrl(devboxId, "acme/widgets");
    hub.scopeSetupCache(devboxId, { repository, ...spec() });
    await executor.start({
      devboxId,
      runId: "cache1",
      apiUrl: hub.url,
      token,
      spec: spec(),
      repository,
    });
    const task = [...fake.tasks.values()].at(-1)!;
    const ready = await until(`${devboxId} to be ready`, () =>
      events.find((event) => event.type === "devbox.ready" && event.devboxId === devboxId),
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}; its log:\n${logOf(task)}`);
    });
    expect(ready, logOf(task)).toMatchObject({ ok: true });
    hub.release(devboxId);
    await executor.stop(devboxId);
    return task;
  };
  const close = async () => {
    executor.close();
    await fake.close();
    await hub.close();
  };
  return { claim, close, logOf, launcher };
}

const installs = () => readFileSync(join(root, "installs.log"), "utf8");

describe.each(Object.entries(stores))("ECS DevBoxes' setup cache on %s", (_name, makeStore) => {
  it("saves after the first DevBox's setup; the second restores it and skips the install", async () => {
    const { claim, close, logOf, launcher } = await openHarness(await makeStore());
    try {
      const first = await claim("cache1-d1");
      const second = await claim("cache1-d2");

      // The install ran once, on the first DevBox; the second restored what it made.
      expect(installs()).toBe("ran\n");
      expect(logOf(first)).toContain("setup cache: saved node_modules to the hub");
      expect(logOf(second)).toContain("setup cache: restored node_modules from the hub");
      const checkout = join(launcher.dirs.get(second.taskArn)!, "workspace");
      expect(readFileSync(join(checkout, "node_modules", "left-pad", "index.js"), "utf8")).toBe(
        "installed\n",
      );
      // The tasks saw no cache directory: only the entries, and the hub's route to keep them.
      expect(first.environment.CLUSTERCODE_SETUP_CACHE).toBe(JSON.stringify(spec().cache));
      expect(first.environment.CLUSTERCODE_SETUP_CACHE_DIRS).toBeUndefined();
      if (fakeS3 !== undefined) {
        expect([...fakeS3.objects.keys()]).toEqual([
          expect.stringMatching(/^acme\/widgets\/branch-[0-9a-f]{24}\/[0-9a-f]{40}$/),
        ]);
      } else {
        expect(existsSync(join(root, "state", "cache", "acme", "widgets"))).toBe(true);
      }
    } finally {
      await close();
    }
  }, 120_000);
});

describe("ECS DevBoxes on a hub that keeps no setup cache", () => {
  it("set up uncached, each of them, as before", async () => {
    const { claim, close, logOf } = await openHarness(undefined);
    try {
      const first = await claim("cache1-d1");
      await claim("cache1-d2");
      expect(installs()).toBe("ran\nran\n");
      expect(logOf(first)).toContain("setup cache: the hub keeps no setup cache");
      expect(logOf(first)).not.toContain("saved node_modules");
    } finally {
      await close();
    }
  }, 120_000);
});
