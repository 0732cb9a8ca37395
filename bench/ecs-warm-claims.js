#!/usr/bin/env node
/* global process, console, setTimeout */
// How soon a claimed ECS DevBox runs its first command, cold (RunTask, clone, setup) and warm
// (`devbox.warm: 1`: a warm task set up ahead takes the claim), with the real hub, the real ECS
// executor and the DevBox image's real entrypoint and agent run as local processes. ECS itself
// is a stand-in client that "places" each task at once by starting its entrypoint: what AWS adds
// (placement, the ENI, the container start) is not here; docs/warm-start.md adds it on paper.
// Each claim's first command stamps its start (`date +%s%3N`); the figure is that stamp minus
// the time of the claim (`executor.start`). In the warm mode the first claim fills the pool and
// is not counted, and each claim waits for a ready warm task (warm capacity waiting).
//
//   node bench/ecs-warm-claims.js [claims] [setup seconds]   default 5 0; needs `npm run build`
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, openSync, closeSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { EcsExecutor } from "../dist/devbox/ecs/executor.js";
import { DevBoxHub } from "../dist/devbox/hub/hub.js";

const CLAIMS = Number(process.argv[2] ?? 5);
const SETUP_SECONDS = Number(process.argv[3] ?? 0);
const ROOT = resolve(import.meta.dirname, "..");
const ENTRYPOINT = join(ROOT, "images", "devbox", "entrypoint.sh");
const CLI = join(ROOT, "dist", "cli", "main.js");

const root = mkdtempSync(join(tmpdir(), "ecs-warm-bench-"));
const git = (cwd, ...args) => execFileSync("git", args, { cwd, encoding: "utf8" }).trim();

/** A bare repository of one commit, standing in for GitHub behind the hub. */
function makeSource(name) {
  const seed = join(root, `seed-${name}`);
  git(root, "init", "--quiet", "--initial-branch=main", seed);
  writeFileSync(join(seed, "README.md"), "# bench\n");
  git(seed, "add", "README.md");
  git(seed, "-c", "user.name=B", "-c", "user.email=b@example.com", "commit", "-qm", "init");
  const source = join(root, `${name}.git`);
  git(root, "clone", "--quiet", "--bare", seed, source);
  return source;
}

/** An ECS client stand-in: RunTask starts the task's entrypoint as a process group at once. */
function localEcs() {
  const bin = join(root, "bin");
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, "clustercode"), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`, {
    mode: 0o755,
  });
  const tasks = new Map();
  let count = 0;
  const send = async (command) => {
    const input = command.input;
    switch (command.constructor.name) {
      case "DescribeTaskDefinitionCommand":
        return {
          taskDefinition: { status: "ACTIVE", taskDefinitionArn: `td/${input.taskDefinition}` },
        };
      case "RunTaskCommand": {
        const taskArn = `task/${++count}`;
        const env = {};
        for (const pair of input.overrides.containerOverrides[0].environment)
          env[pair.name] = pair.value;
        const dir = join(root, `task-${count}`);
        mkdirSync(join(dir, "home"), { recursive: true });
        const log = openSync(join(dir, "agent.log"), "a");
        const child = spawn("bash", [ENTRYPOINT], {
          cwd: dir,
          env: {
            PATH: `${bin}:${process.env.PATH}`,
            HOME: join(dir, "home"),
            ...env,
            CLUSTERCODE_WORKSPACE: join(dir, "workspace"),
          },
          detached: true,
          stdio: ["ignore", log, log],
        });
        closeSync(log);
        tasks.set(taskArn, child);
        return { tasks: [{ taskArn }], failures: [] };
      }
      case "ListTasksCommand":
        return { taskArns: [] };
      case "DescribeTasksCommand":
        return {
          tasks: input.tasks.map((taskArn) => ({
            taskArn,
            lastStatus: tasks.get(taskArn)?.exitCode === null ? "RUNNING" : "STOPPED",
          })),
          failures: [],
        };
      case "StopTaskCommand": {
        const child = tasks.get(input.task);
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {
          // Gone already.
        }
        return {};
      }
      default:
        throw new Error(`not supported: ${command.constructor.name}`);
    }
  };
  const killAll = () => {
    for (const child of tasks.values()) {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // Gone already.
      }
    }
  };
  return { client: { send }, killAll };
}

async function until(check) {
  for (let i = 0; i < 6000; i++) {
    const value = check();
    if (value) return value;
    await new Promise((done) => setTimeout(done, 20));
  }
  throw new Error("timed out");
}

/** Claims `CLAIMS` DevBoxes one after another; the milliseconds from each claim to its first command. */
async function measure(warm) {
  const source = makeSource(warm ? "warm" : "cold");
  const upstream = () => Promise.resolve({ url: source, env: {} });
  const events = [];
  const hub = new DevBoxHub({
    onEvent: (event) => events.push(event),
    lapseMs: 60_000,
    git: {
      stateDir: join(root, `hub-${warm}`),
      upstreamOf: upstream,
      policyOf: () => Promise.resolve({ runBranch: "", allowWorkflowChanges: false }),
    },
    warm: { stateDir: join(root, `hub-${warm}`), upstreamOf: upstream },
  });
  await hub.listen();
  const { client, killAll } = localEcs();
  const executor = new EcsExecutor({
    client,
    cluster: "devboxes",
    capacityProvider: "devboxes",
    executionRoleArn: "arn:aws:iam::123456789012:role/e",
    taskRoleArn: "arn:aws:iam::123456789012:role/t",
    defaultImage: "devbox:bench",
    region: "eu-west-1",
    secretArnPrefix: "arn:aws:secretsmanager:eu-west-1:123456789012:secret:",
    agentEnv: { CLUSTERCODE_DEVBOX_HEARTBEAT_MS: "1000", CLUSTERCODE_DEVBOX_LAPSE_MS: "60000" },
    pollIntervalMs: 1000,
    ...(warm ? { warm: { max: 1 } } : {}),
  });
  if (warm) await executor.attachWarm(hub.warmIdentities, hub.url);
  const times = [];
  try {
    for (let claim = 0; claim < CLAIMS + (warm ? 1 : 0); claim++) {
      const runId = `${warm ? "w" : "c"}${claim}`;
      const devboxId = `${runId}.a.1`;
      if (warm && claim > 0) await until(() => executor.warm.ready === 1);
      const { token } = hub.register({ devboxId, runId });
      const spec = {
        branch: `clustercode/1-${runId}`,
        baseBranch: "main",
        setup: [SETUP_SECONDS > 0 ? `sleep ${SETUP_SECONDS}` : "true"],
        secrets: [],
        ...(warm ? { warm: { count: 1, branch: "main" } } : {}),
      };
      const claimedAt = Date.now();
      await executor.start({
        devboxId,
        runId,
        apiUrl: hub.url,
        token,
        spec,
        repository: hub.gitUrl(devboxId, "bench/r1"),
        repo: "bench/r1",
      });
      hub.dispatch(devboxId, {
        commandId: "c1",
        command: { type: "script", script: "date +%s%3N" },
      });
      const finished = await until(() =>
        events.find((e) => e.type === "command.finished" && e.devboxId === devboxId),
      );
      const stamp = Number(finished.result.output.trim());
      // The claim that filled the pool started cold: not counted.
      if (!warm || claim > 0) times.push(stamp - claimedAt);
      hub.release(devboxId);
      await executor.stop(devboxId);
    }
  } finally {
    await executor.stopWarm();
    executor.close();
    killAll();
    await hub.close();
  }
  return times;
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

try {
  const cold = await measure(false);
  const warm = await measure(true);
  console.log(
    `ECS claim → first command (local processes, setup ${SETUP_SECONDS} s, ${CLAIMS} claims each)`,
  );
  console.log(`  cold: median ${median(cold)} ms  (${cold.join(", ")})`);
  console.log(`  warm: median ${median(warm)} ms  (${warm.join(", ")})`);
} finally {
  rmSync(root, { recursive: true, force: true });
}
