#!/usr/bin/env node
/* global process, console, performance, URL */
// The app with many runs parked at approvals: its memory once it has picked them up after a
// restart (RSS of the whole process, dynalite's thread included, its peak, and the main
// thread's heap), how soon its health check answers after that restart, and how many GitHub
// writes the restart makes (none when what it last wrote is current). The runs are written to
// the embedded store directly (each parked at its approval, as the engine leaves it); the app
// (as `npm start` runs it, a child process) talks to a loopback GitHub
// (bench/loopback-github.js). A first start writes every run's surfaces (unpaced); the
// measured second start finds them current. With 0 runs it measures the app's floor.
//
//   node bench/parked-runs.js [runs]        default 1000; needs `npm run build`
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  appEnv,
  GATE_WORKFLOW,
  peakRssMiB,
  rssMiB,
  sleep,
  startApp,
  stopApp,
  waitForIdle,
} from "./app-process.js";
import { startLoopbackGitHub } from "./loopback-github.js";

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = "true";
const root = fileURLToPath(new URL("..", import.meta.url));
const RUNS = Number(process.argv[2] ?? 1000);
const REPOS = 10;

/** Writes `count` runs parked at their approval, spread over the bench repositories. */
async function seed(stateDir, count) {
  const { openStore } = await import(`${root}dist/store/embedded.js`);
  const { parseWorkflow } = await import(`${root}dist/workflow/parse.js`);
  const { createSnapshot, step } = await import(`${root}dist/engine/step.js`);
  const parsed = parseWorkflow(GATE_WORKFLOW);
  if (!parsed.ok) throw new Error("the bench workflow does not parse");
  const { decodeSettings } = await import(`${root}dist/settings/index.js`);
  const opened = await openStore({ stateDir, settings: decodeSettings({}).store });
  const now = Date.now();
  for (let i = 0; i < count; i++) {
    const runId = `park${String(i).padStart(6, "0")}`;
    const issue = 1000 + i;
    const definition = {
      runId,
      workflow: parsed.workflow,
      baseBranch: "main",
      branch: `clustercode/${issue}-${runId}`,
      brief: `Parked run ${i}`,
      engines: {},
    };
    const { snapshot } = step(definition, createSnapshot(definition, now), {
      type: "run.start",
      at: now,
    });
    await opened.store.createRun({
      runId,
      version: 1,
      repo: `bench/r${(i % REPOS) + 1}`,
      workflow: "gate",
      status: snapshot.status,
      snapshot: { definition, state: snapshot },
      outbox: [],
      createdAt: now,
      updatedAt: now,
      issue,
    });
  }
  await opened.close();
}

/** Waits until GitHub was called and then heard nothing for `quietMs`. */
async function settle(github, quietMs = 3000) {
  const before = github.counts.requests;
  while (github.counts.requests === before || github.quietFor() < quietMs) await sleep(100);
  return performance.now() - github.quietFor();
}

/** The app's main-thread process.memoryUsage(), through bench/memory-probe.js. */
async function memoryUsageOf(child, file) {
  child.kill("SIGUSR2");
  for (let waited = 0; waited < 5000; waited += 50) {
    const text = (() => {
      try {
        return readFileSync(file, "utf8");
      } catch {
        return "";
      }
    })();
    if (text !== "") return JSON.parse(text);
    await sleep(50);
  }
  throw new Error("the app did not report its memory");
}

const mib = (bytes) => (bytes / 1024 / 1024).toFixed(1);

const dir = mkdtempSync(join(tmpdir(), "cc-parked-"));
const github = await startLoopbackGitHub({ workflow: GATE_WORKFLOW });
try {
  await seed(dir, RUNS);
  const env = appEnv(dir, github.host);
  // First start: every run's surfaces are written (unpaced: the loopback GitHub is quick).
  github.touch();
  const first = await startApp({
    ...env,
    CLUSTERCODE_GITHUB_WRITE_GAP_MS: "0",
    CLUSTERCODE_GITHUB_NOTIFICATION_GAP_MS: "0",
  });
  await settle(github);
  const firstResyncMs = (await waitForIdle(first.child.pid)) - first.started;
  const firstWrites = github.counts.writes;
  await stopApp(first.child);

  // The restart measured: GitHub's pace, surfaces already current.
  const writesBefore = github.counts.writes;
  github.touch();
  const probeFile = join(dir, "memory.json");
  const second = await startApp({ ...env, MEMORY_PROBE_FILE: probeFile }, [
    "--import",
    `${root}bench/memory-probe.js`,
  ]);
  const recoveredMs = (await waitForIdle(second.child.pid)) - second.started;
  const rss = rssMiB(second.child.pid);
  const peak = peakRssMiB(second.child.pid);
  const memory = await memoryUsageOf(second.child, probeFile);
  const writes = github.counts.writes - writesBefore;
  await stopApp(second.child);

  console.log(`parked runs: ${RUNS} (approval-only workflow, ${REPOS} repositories)`);
  console.log(
    `first start: surfaces written in ${(firstResyncMs / 1000).toFixed(1)} s, ${firstWrites} GitHub writes`,
  );
  console.log(`restart: health check answered after ${second.healthMs.toFixed(0)} ms`);
  console.log(
    `restart: runs picked up (app idle) after ${(recoveredMs / 1000).toFixed(1)} s, ${writes} GitHub writes`,
  );
  console.log(
    `restart: RSS ${rss.toFixed(0)} MiB with the runs picked up (peak ${peak.toFixed(0)} MiB)`,
  );
  console.log(
    `restart: main thread heapUsed ${mib(memory.heapUsed)} MiB of ${mib(memory.heapTotal)}, external ${mib(memory.external)} MiB, arrayBuffers ${mib(memory.arrayBuffers)} MiB`,
  );
} finally {
  await github.close();
  rmSync(dir, { recursive: true, force: true });
}
