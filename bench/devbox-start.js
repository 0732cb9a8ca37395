#!/usr/bin/env node
/* global process, console, performance, Buffer */
// How long a local DevBox takes from claim to ready (issue 35), through the real hub, executor
// and agent (`dist/`), without the sandbox (CLUSTERCODE_UNSAFE_LOCAL_DEVBOX=1: the walls cost the
// same either way):
//
//   (a) clone: a generated repository with a long history (≥ 20,000 commits, ≥ 200 MB; with
//       --small 2,000 commits, 20 MB), cloned in full (`file://`, as before mirrors) vs a
//       blobless clone of one branch from the host's mirror (already made by an earlier claim;
//       each claim still fetches it fresh).
//   (b) setup: a Node project whose setup is `npm ci` (skipped on a cache hit), with and without
//       `devbox.cache: [{ key: [package-lock.json], paths: [node_modules] }]`; npm's own cache
//       is warm in both, so the uncached figure is npm ci at its fastest.
//
// The repository and the project are generated once into BENCH_DIR (default
// `$TMPDIR/clustercode-bench-devbox`), outside this repository, and reused after.
//
//   node bench/devbox-start.js [--small] [--runs N] [--via-hub] [--fresh-mirror] [clone|setup]
//   (needs `npm run build`)
//
// --via-hub clones (a) through the hub's git route, as on the app, instead of from `file://`.
// --fresh-mirror makes every partial claim fetch the mirror, as if the last fetch were more than
// the executor's freshness window (30 s) ago; without it, claims in a row share one fetch.
import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DevBoxHub } from "../dist/devbox/hub/hub.js";
import { LocalExecutor } from "../dist/devbox/local/executor.js";

const args = process.argv.slice(2);
const SMALL = args.includes("--small");
const RUNS = Number(args[args.indexOf("--runs") + 1] ?? 3) || 3;
const ONLY = args.find((arg) => arg === "clone" || arg === "setup");
/** Clone through the hub's git route (as on the app) instead of from a `file://` address. */
const VIA_HUB = args.includes("--via-hub");
/** Every partial claim fetches the mirror (no claim within the freshness window of another). */
const FRESH_MIRROR = args.includes("--fresh-mirror");
const BENCH_DIR = process.env.BENCH_DIR ?? join(tmpdir(), "clustercode-bench-devbox");
const COMMITS = SMALL ? 2_000 : 20_000;
/** Bytes of incompressible content each commit writes: 10.5 KiB × 20,000 ≈ 210 MiB. */
const BLOB_BYTES = 10_752;
const FILES = 500;

const git = (cwd, ...argv) => execFileSync("git", argv, { cwd, encoding: "utf8" }).trim();

/** Writes the history with `git fast-import`: one file of FILES rewritten per commit. */
async function generateRepository(dir) {
  const marker = join(dir, "complete");
  if (existsSync(marker)) return dir;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  git(dir, "init", "--quiet", "--bare", "--initial-branch=main");
  const started = performance.now();
  const importer = spawn("git", ["fast-import", "--quiet"], {
    cwd: dir,
    stdio: ["pipe", "inherit", "inherit"],
  });
  const write = (chunk) =>
    importer.stdin.write(chunk)
      ? Promise.resolve()
      : new Promise((r) => importer.stdin.once("drain", r));
  for (let i = 1; i <= COMMITS; i++) {
    const message = `commit ${i}\n`;
    const blob = randomBytes(BLOB_BYTES);
    await write(
      `commit refs/heads/main\nmark :${i}\ncommitter Bench <bench@example.com> ${1_700_000_000 + i} +0000\n` +
        `data ${Buffer.byteLength(message)}\n${message}${i > 1 ? `from :${i - 1}\n` : ""}` +
        `M 100644 inline src/d${i % 50}/f${i % FILES}.bin\ndata ${BLOB_BYTES}\n`,
    );
    await write(blob);
    await write("\n");
  }
  importer.stdin.end();
  await new Promise((resolve, reject) =>
    importer.once("exit", (code) =>
      code === 0 ? resolve() : reject(new Error(`fast-import ${code}`)),
    ),
  );
  writeFileSync(marker, "");
  const size = execFileSync("du", ["-sm", dir], { encoding: "utf8" }).split("\t")[0];
  console.error(
    `generated ${COMMITS} commits, ${size} MB in ${((performance.now() - started) / 1000).toFixed(1)} s at ${dir}`,
  );
  return dir;
}

/** A Node project with a lockfile (made once with npm, which also warms npm's own cache). */
function generateNodeProject(dir) {
  const marker = join(dir, "complete");
  if (existsSync(marker)) return dir;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const dependencies = {
    typescript: "~5.9",
    eslint: "^9.39.5",
    prettier: "^3.10.1",
    vitest: "^4.1.12",
    zod: "^4.6.7",
  };
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({ name: "bench-node", private: true, dependencies }, null, 2),
  );
  writeFileSync(join(dir, ".gitignore"), "node_modules/\n");
  execFileSync("npm", ["install", "--no-audit", "--no-fund", "--ignore-scripts"], {
    cwd: dir,
    stdio: "inherit",
  });
  rmSync(join(dir, "node_modules"), { recursive: true, force: true });
  git(dir, "init", "--quiet", "--initial-branch=main");
  git(dir, "add", ".");
  git(dir, "-c", "user.name=B", "-c", "user.email=b@example.com", "commit", "-qm", "project");
  writeFileSync(join(dir, "complete"), "");
  return dir;
}

/** One claim → ready on a fresh executor state (or `stateDir`, kept between claims). */
async function claim(hub, repository, { stateDir, setup = [], cache, partialClones = true }) {
  const executor = new LocalExecutor({
    stateDir,
    partialClones,
    ...(FRESH_MIRROR ? { mirrorFreshMs: 0 } : {}),
    env: { ...process.env, CLUSTERCODE_UNSAFE_LOCAL_DEVBOX: "1" },
    sandbox: { unsafe: true },
  });
  const devboxId = `bench-${randomBytes(4).toString("hex")}`;
  const apiUrl = await hub.listen();
  const { token } = hub.register({ devboxId, runId: "bench" });
  const started = performance.now();
  await executor.start({
    devboxId,
    runId: "bench",
    apiUrl,
    token,
    repository: typeof repository === "function" ? repository(devboxId) : repository,
    spec: {
      branch: "clustercode/bench-1",
      baseBranch: "main",
      setup,
      secrets: [],
      ...(cache ? { cache } : {}),
    },
  });
  const ready = await hub.readyOf(devboxId);
  const ms = performance.now() - started;
  await executor.stop(devboxId);
  rmSync(executor.paths(devboxId).dir, { recursive: true, force: true });
  if (!ready.ok) throw new Error(`the DevBox failed its setup: ${ready.output ?? ""}`);
  return ms;
}

/** A hub whose `readyOf` resolves with a DevBox's ready event; `upstream`: it serves git. */
function benchHub(upstream, stateDir) {
  const waiting = new Map();
  const hub = new DevBoxHub({
    onEvent: (event) => {
      if (event.type === "devbox.ready") waiting.get(event.devboxId)?.(event);
    },
    lapseMs: 60_000,
    ...(upstream === undefined
      ? {}
      : {
          git: {
            stateDir,
            upstreamOf: () => Promise.resolve({ url: upstream, env: {} }),
            policyOf: () =>
              Promise.resolve({ runBranch: "clustercode/bench-1", allowWorkflowChanges: false }),
          },
        }),
  });
  hub.readyOf = (devboxId) => new Promise((resolve) => waiting.set(devboxId, resolve));
  return hub;
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const seconds = (ms) => `${(ms / 1000).toFixed(2)} s`;

async function benchClone(fileHub, work) {
  const repo = await generateRepository(join(BENCH_DIR, SMALL ? "small.git" : "big.git"));
  const hub = VIA_HUB ? benchHub(repo, mkdtempSync(join(work, "hub-"))) : fileHub;
  if (VIA_HUB) await hub.listen();
  const repository = VIA_HUB ? (devboxId) => hub.gitUrl(devboxId, "bench/big") : `file://${repo}`;
  const full = [];
  const partial = [];
  const stateDir = mkdtempSync(join(work, "state-"));
  const first = await claim(hub, repository, { stateDir });
  for (let i = 0; i < RUNS; i++) {
    full.push(
      await claim(hub, repository, {
        stateDir: mkdtempSync(join(work, "full-")),
        partialClones: false,
      }),
    );
    partial.push(await claim(hub, repository, { stateDir }));
  }
  const ratio = (100 * median(partial)) / median(full);
  if (VIA_HUB) await hub.close();
  console.log(
    `(a) ${COMMITS} commits${VIA_HUB ? " through the hub" : ""}${FRESH_MIRROR ? ", mirror fetched by every claim" : ""}: full clone ${seconds(median(full))}, partial clone from the mirror ${seconds(median(partial))} (${ratio.toFixed(1)} %; target ≤ 20 %); the claim that made the mirror: ${seconds(first)}`,
  );
}

async function benchSetup(hub, work) {
  const project = generateNodeProject(join(BENCH_DIR, "node-project"));
  const setup = [
    '[ "$CLUSTERCODE_CACHE_HIT" = true ] || npm ci --no-audit --no-fund --ignore-scripts',
  ];
  const cache = [{ key: ["package-lock.json"], paths: ["node_modules"] }];
  const stateDir = mkdtempSync(join(work, "state-"));
  const none = [];
  const uncached = [];
  const cached = [];
  await claim(hub, project, { stateDir, setup, cache });
  for (let i = 0; i < RUNS; i++) {
    none.push(await claim(hub, project, { stateDir }));
    uncached.push(await claim(hub, project, { stateDir, setup }));
    cached.push(await claim(hub, project, { stateDir, setup, cache }));
  }
  const base = median(none);
  const ratio = (100 * (median(cached) - base)) / (median(uncached) - base);
  console.log(
    `(b) npm ci setup: uncached ${seconds(median(uncached))}, cached ${seconds(median(cached))}, no setup ${seconds(base)}: setup ${seconds(median(cached) - base)} vs ${seconds(median(uncached) - base)} (${ratio.toFixed(1)} %; target ≤ 10 %)`,
  );
}

const work = mkdtempSync(join(tmpdir(), "cc-devbox-start-"));
const hub = benchHub();
try {
  if (ONLY !== "setup") await benchClone(hub, work);
  if (ONLY !== "clone") await benchSetup(hub, work);
} finally {
  await hub.close();
  rmSync(work, { recursive: true, force: true });
}
