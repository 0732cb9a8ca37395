#!/usr/bin/env node
/* global process, console, performance */
// Partial claims through the hub (bench/devbox-start.js --via-hub, (a)), alternating between two
// builds in one process, so that the load of a shared machine weighs on both alike: a change to
// the claim path is compared with the code before it, claim for claim.
//
//   node bench/devbox-start-ab.js <before> <after> [runs=11]
//
// <before> and <after> are checkouts with `dist/` built (`npm run build`); the generated
// repository is the one bench/devbox-start.js made (BENCH_DIR, default
// `$TMPDIR/clustercode-bench-devbox/big.git`; run that script once first).
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const [before, after, runs = "11"] = process.argv.slice(2);
const RUNS = Number(runs) || 11;
const BENCH_DIR = process.env.BENCH_DIR ?? join(tmpdir(), "clustercode-bench-devbox");
const REPOSITORY = join(BENCH_DIR, "big.git");

/** A hub serving REPOSITORY and a claim → ready of one partial DevBox, from the build at `root`. */
async function side(root, work) {
  const { DevBoxHub } = await import(resolve(root, "dist/devbox/hub/hub.js"));
  const { LocalExecutor } = await import(resolve(root, "dist/devbox/local/executor.js"));
  const waiting = new Map();
  const hub = new DevBoxHub({
    onEvent: (event) => {
      if (event.type === "devbox.ready") waiting.get(event.devboxId)?.(event);
    },
    lapseMs: 60_000,
    git: {
      stateDir: mkdtempSync(join(work, "hub-")),
      upstreamOf: () => Promise.resolve({ url: REPOSITORY, env: {} }),
      policyOf: () =>
        Promise.resolve({ runBranch: "clustercode/bench-1", allowWorkflowChanges: false }),
    },
  });
  const apiUrl = await hub.listen();
  const stateDir = mkdtempSync(join(work, "state-"));
  const claim = async () => {
    const env = { ...process.env, CLUSTERCODE_UNSAFE_LOCAL_DEVBOX: "1" };
    const executor = new LocalExecutor({ stateDir, env, sandbox: { unsafe: true } });
    const devboxId = `bench-${randomBytes(4).toString("hex")}`;
    const { token } = hub.register({ devboxId, runId: "bench" });
    const started = performance.now();
    await executor.start({
      devboxId,
      runId: "bench",
      apiUrl,
      token,
      repository: hub.gitUrl(devboxId, "bench/big"),
      spec: { branch: "clustercode/bench-1", baseBranch: "main", setup: [], secrets: [] },
    });
    const ready = await new Promise((resolve) => waiting.set(devboxId, resolve));
    const ms = performance.now() - started;
    await executor.stop(devboxId);
    rmSync(executor.paths(devboxId).dir, { recursive: true, force: true });
    if (!ready.ok) throw new Error(`the DevBox did not get ready: ${ready.output ?? ""}`);
    return ms;
  };
  return { hub, claim };
}

if (before === undefined || after === undefined || !existsSync(REPOSITORY)) {
  console.error("usage: node bench/devbox-start-ab.js <before> <after> [runs]");
  console.error(`(and ${REPOSITORY} made by bench/devbox-start.js)`);
  process.exit(2);
}
const work = mkdtempSync(join(tmpdir(), "clustercode-bench-ab-"));
try {
  const a = await side(before, work);
  const b = await side(after, work);
  // The first claim of each makes its mirror: not measured.
  await a.claim();
  await b.claim();
  const times = { before: [], after: [] };
  for (let i = 0; i < RUNS; i++) {
    times.before.push(await a.claim());
    times.after.push(await b.claim());
  }
  const median = (values) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)];
  const faster = times.after.filter((ms, i) => ms < (times.before[i] ?? 0)).length;
  console.log(
    `partial claim through the hub, median of ${RUNS}: before ${(median(times.before) / 1000).toFixed(2)} s, after ${(median(times.after) / 1000).toFixed(2)} s; after faster in ${faster} of ${RUNS} pairs`,
  );
  await a.hub.close();
  await b.hub.close();
} finally {
  rmSync(work, { recursive: true, force: true });
}
