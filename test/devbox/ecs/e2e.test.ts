/**
 * End to end: the engine runs a workflow through the runtime, DevBoxEffects and a real hub on
 * the ECS executor, against a local endpoint that speaks the ECS JSON protocol and runs each
 * task's DevBox entrypoint and the built agent (`dist/`, built by `npm test`) as processes.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EcsExecutor } from "../../../src/devbox/ecs/executor.js";
import type { EcsStatus } from "../../../src/devbox/ecs/status.js";
import { providerUpstreams } from "../../../src/devbox/hub/provider-proxy.js";
import { decodeSettings } from "../../../src/settings/index.js";
import { DevBoxHub } from "../../../src/devbox/hub/hub.js";
import { DevBoxRegistry } from "../../../src/runtime/devbox-registry.js";
import { gitPolicyOf } from "../../../src/runtime/devbox-git.js";
import { DevBoxEffects, splitDevBoxId } from "../../../src/runtime/effects.js";
import { NO_JUDGE } from "../../../src/runtime/judge.js";
import { isSettled, Runtime } from "../../../src/runtime/runtime.js";
import { definitionOf, workflowOf } from "../../engine/harness.js";
import { useTestDynamo } from "../../store/dynalite-fixture.js";
import { checkInvariants } from "../../faults/invariants.js";
import { pushedCommits, recordPushes } from "../../faults/pushes.js";
import { FakeEcs, type FakeTask, TEST_CLUSTER, ecsClientOf } from "./endpoint.js";
import { LocalTaskLauncher } from "./local-tasks.js";

const dynamo = useTestDynamo();
const root = realpathSync(mkdtempSync(join(tmpdir(), "clustercode-ecs-e2e-")));
const source = join(root, "source.git");
const marker = join(root, "b-started");
const CLONE_URL = "https://github.com/acme/widgets.git";
const SECRET_ARN =
  "arn:aws:secretsmanager:eu-west-1:123456789012:secret:clustercode/acme/widgets/API_KEY";
const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, { cwd, encoding: "utf8" }).trim();

beforeAll(() => {
  const seed = join(root, "seed");
  git(root, "init", "--quiet", "--initial-branch=main", seed);
  writeFileSync(join(seed, "README.md"), "# widgets\n");
  git(seed, "add", "README.md");
  git(seed, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", "init");
  git(root, "clone", "--quiet", "--bare", seed, source);
  recordPushes(source);
});
afterAll(() => rm(root, { recursive: true, force: true }));

const workflow = workflowOf(`version: 1
name: ecs-e2e
on: { label: go }
devbox:
  cpu: 1
  memory: 1GiB
  secrets: [API_KEY, ANTHROPIC_API_KEY]
nodes:
  a:
    kind: run
    run: echo hello > a.txt
  b:
    kind: run
    run: |
      grep -q hello a.txt
      test "$API_KEY" = from-secrets-manager
      case "$ANTHROPIC_API_KEY:$ANTHROPIC_BASE_URL" in clustercode-*:*/providers/anthropic) ;; *) exit 9 ;; esac
      if [ -f ${marker} ]; then echo second > b.txt; else touch ${marker}; sleep 60; fi
edges:
  - { from: a, to: b }
`);

const definitionSpec = {
  branch: "clustercode/9-e2e1",
  baseBranch: "clustercode/9-e2e1",
  setup: [],
  secrets: ["API_KEY"],
  cpu: 1,
  memoryMiB: 1024,
};

/** The DevBox id a fake task was started for, from its tags. */
function devboxIdOf(task: FakeTask): string | undefined {
  return (task.tags as { key: string; value: string }[]).find(
    (tag) => tag.key === "clustercode:devbox",
  )?.value;
}

async function until<T>(what: string, check: () => Promise<T | undefined> | T | undefined) {
  for (let i = 0; i < 2400; i++) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("ECS executor end to end", () => {
  it("runs a workflow on ECS tasks, retries placement, recovers a spot-interrupted node", async () => {
    const launcher = new LocalTaskLauncher(root, { [CLONE_URL]: source });
    const fake = new FakeEcs(launcher, { [SECRET_ARN]: "from-secrets-manager" });
    const endpoint = await fake.listen();
    const store = await dynamo.newStore();
    const statuses: EcsStatus[] = [];
    const registry = new DevBoxRegistry(Date.now);
    const failures: unknown[] = [];
    const hub = new DevBoxHub({
      onEvent: (event) => registry.onHubEvent(event),
      onError: (error) => failures.push(error),
      // Losses here come from ECS (the spot interruption), never from a lapse: a long lapse keeps
      // a DevBox starved of CPU on a loaded machine from being declared lost as well.
      lapseMs: 60_000,
      // The app holds the provider key: tasks get a placeholder and the hub's proxy.
      providers: providerUpstreams(
        decodeSettings({ ANTHROPIC_API_KEY: "sk-ant-held-by-the-app" }).providers,
      ),
      // Git goes through the hub: the bare repository on disk stands in for GitHub.
      git: {
        stateDir: join(root, "hub-state"),
        upstreamOf: () => Promise.resolve({ url: source, env: {} }),
        policyOf: gitPolicyOf(store),
      },
    });
    const client = () => ecsClientOf(endpoint);
    const settings = {
      ...TEST_CLUSTER,
      agentEnv: { CLUSTERCODE_DEVBOX_HEARTBEAT_MS: "200", CLUSTERCODE_DEVBOX_LAPSE_MS: "60000" },
      placement: { baseDelayMs: 50 },
      pollIntervalMs: 200,
    };
    const executor = new EcsExecutor({
      ...settings,
      client: client(),
      onStatus: (status) => statuses.push(status),
      // What the runtime does with a lost task: the hub forgets it, the run hears of it.
      onLost: (id, reason) => {
        hub.release(id);
        const { runId, devboxId } = splitDevBoxId(id);
        runtime.offer(runId, { type: "devbox.lost", devboxId, reason, at: Date.now() });
      },
    });
    const effects: DevBoxEffects = new DevBoxEffects({
      store,
      hub,
      executor,
      judge: NO_JUDGE,
      registry,
      source: { env: {}, repositoryOf: () => Promise.resolve("acme/widgets") },
      now: Date.now,
    });
    const runtime = new Runtime({
      store,
      performer: effects,
      now: Date.now,
      onError: (error) => failures.push(error),
    });
    await hub.listen();
    try {
      fake.placementFailures.push([{ reason: "RESOURCE:MEMORY", arn: "arn:instance/i-1" }]);
      const definition = definitionOf(workflow, {
        runId: "e2e1",
        branch: "clustercode/9-e2e1",
        baseBranch: "main",
      });
      await runtime.start(definition, { repo: "acme/widgets" });

      // Node b is running in the first task: EC2 takes the spot instance away.
      await until("node b to start", () => existsSync(marker));
      const [first] = [...fake.tasks.values()];
      await fake.interrupt(first!.taskArn, "SpotInterruption", "Your Spot Task was interrupted.");

      const final = await until("the run to settle", async () => {
        const state = (await runtime.load("e2e1"))?.document.state;
        return state !== undefined && isSettled(state) ? state : undefined;
      });
      await runtime.idle();
      const logs = [...launcher.dirs.values()].map((dir) => join(dir, "agent.log"));
      expect(final.status, `task logs: ${logs.join(", ")}`).toBe("succeeded");
      expect(failures).toEqual([]);

      // The DevBoxes cloned and pushed through the hub, holding no GitHub token of their own.
      const home = join(launcher.dirs.get(first!.taskArn)!, "home");
      expect(existsSync(join(home, ".git-credentials"))).toBe(false);

      // The re-run of b happened in a new DevBox that cloned a's checkpoint from the run branch.
      expect(git(source, "show", "clustercode/9-e2e1:a.txt")).toBe("hello");
      expect(git(source, "show", "clustercode/9-e2e1:b.txt")).toBe("second");
      const evidence = (await store.listEvidence("e2e1")).map(
        (record) => record.entry as { kind: string; reason?: string; node?: string },
      );
      expect(evidence.find((entry) => entry.kind === "attempt.lost")).toMatchObject({
        node: "b",
        reason: "SpotInterruption: Your Spot Task was interrupted.",
      });

      // What the SDK sent: one task definition whose secrets are the repository's own ARNs...
      const registered = fake.sent("RegisterTaskDefinition");
      expect(registered).toHaveLength(1);
      expect(registered[0]).toMatchObject({
        cpu: "1024",
        memory: "1024",
        containerDefinitions: [{ secrets: [{ name: "API_KEY", valueFrom: SECRET_ARN }] }],
      });
      // ...RunTask on the capacity provider, retried after failures[], one task per DevBox...
      const runs = fake.sent("RunTask");
      const [firstId, secondId] = [...fake.tasks.values()].map(devboxIdOf);
      expect(runs.map((run) => run.clientToken)).toEqual([firstId, `${firstId}.p1`, secondId]);
      for (const run of runs) {
        expect(run.capacityProviderStrategy).toEqual([
          { capacityProvider: "devbox-asg", weight: 1 },
        ]);
        expect(JSON.stringify(run.overrides)).not.toContain("from-secrets-manager");
        expect(JSON.stringify(run.overrides)).not.toContain("sk-ant-held-by-the-app");
      }
      expect(statuses.map((status) => status.state)).toEqual([
        "waiting-for-capacity",
        "started",
        "stopped",
        "started",
      ]);
      expect(fake.tasks.size).toBe(2);
      // ...and StopTask when the run released its DevBox.
      const second = [...fake.tasks.values()][1]!;
      expect(fake.sent("StopTask")).toEqual([
        { cluster: "devboxes", task: second.taskArn, reason: "released by clustercode" },
      ]);

      // A duplicate dispatch of that claim (another replica) gives no second task.
      const replica = new EcsExecutor({ ...settings, client: client() });
      await replica.start({
        devboxId: secondId!,
        runId: "e2e1",
        apiUrl: hub.url,
        token: "t",
        spec: definitionSpec,
        repository: "acme/widgets",
      });
      replica.close();
      expect(fake.tasks.size).toBe(2);
      expect(fake.sent("RunTask").at(-1)?.clientToken).toBe(second.clientToken);
      // One task per DevBox, and one checkpoint of each node on the run branch per visit.
      const pushes = pushedCommits(source);
      expect(pushes.map((commit) => commit.subject)).toContain("clustercode: b (succeeded)");
      expect(
        await checkInvariants({
          store,
          runIds: ["e2e1"],
          ecsTasks: [...fake.tasks.values()],
          pushes,
        }),
      ).toEqual([]);
    } finally {
      executor.close();
      await fake.close();
      await hub.close();
    }
  }, 150_000);
});
