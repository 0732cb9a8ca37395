#!/usr/bin/env node
/* global process, console, fetch, performance */
// How soon a run's DevBox starts working, cold and warm (`devbox.warm`), on the local executor:
// the app (`node dist/github/main.js`) against a loopback GitHub that also serves the
// repository over git's smart HTTP. For each run: label → the first node's first command, then
// `/approve` → the next node's first command (a new DevBox claim). Each command stamps the time
// it starts (`date +%s%3N`) in a file, so what is measured is the delivery to the command
// running, everything between included (intake, claim, clone or warm hand-over, agent start,
// checkout, setup, dispatch). Runs go one after another; in the warm mode the first run primes
// the pool and is not counted, and each run is labelled once the pool is full again (warm
// capacity waiting, as `devbox.warm` keeps it). Local DevBoxes run without the sandbox here
// (CLUSTERCODE_UNSAFE_LOCAL_DEVBOX=1) so that the commands can stamp a file of the bench.
//
//   node bench/warm-starts.js [runs] [setup seconds]   default 5 0; needs `npm run build`
import { execFileSync } from "node:child_process";
import { createHmac, randomUUID } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { appEnv, sleep, startApp, stopApp, WEBHOOK_SECRET } from "./app-process.js";
import { startLoopbackGitHub } from "./loopback-github.js";

const RUNS = Number(process.argv[2] ?? 5);
const SETUP_SECONDS = Number(process.argv[3] ?? 0);
const REPOSITORY = { name: "r1", full_name: "bench/r1", owner: { login: "bench" } };

/** The workflow: a command, an approval, a command; each command stamps when it started. */
function workflow(dir, warm) {
  const setup = SETUP_SECONDS > 0 ? `sleep ${SETUP_SECONDS}` : "true";
  return `version: 1
name: warm-bench
on:
  label: clustercode
devbox:
  setup: ["${setup}"]
${warm ? "  warm: 1\n" : ""}nodes:
  first: { kind: run, run: "date +%s%3N >> ${dir}/first" }
  ship: { kind: approval }
  second: { kind: run, run: "date +%s%3N >> ${dir}/second" }
edges:
  - { from: first, to: ship }
  - { from: ship, to: second, label: approved }
  - { from: ship, to: failed, label: rejected }
`;
}

async function deliver(port, event, payload) {
  const body = JSON.stringify(payload);
  const signature = createHmac("sha256", WEBHOOK_SECRET).update(body).digest("hex");
  const res = await fetch(`http://127.0.0.1:${port}/api/github/webhooks`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-github-event": event,
      "x-github-delivery": randomUUID(),
      "x-hub-signature-256": `sha256=${signature}`,
    },
    body,
  });
  if (!res.ok) throw new Error(`the app answered ${res.status} to a delivery`);
}

const user = { login: "alice", type: "User", id: 2 };
const issue = (number) => ({ number, title: `Bench ${number}`, body: "Go.", user, labels: [] });
const repository = { ...REPOSITORY, default_branch: "main", private: false };

const labeled = (number) => ({
  action: "labeled",
  label: { name: "clustercode" },
  issue: issue(number),
  repository,
  installation: { id: 1 },
  sender: user,
});

const approval = (number) => ({
  action: "created",
  issue: issue(number),
  comment: {
    id: number * 1000,
    body: "/approve",
    user,
    html_url: `http://github.test/bench/r1/issues/${number}#issuecomment-${number * 1000}`,
    author_association: "MEMBER",
  },
  repository,
  installation: { id: 1 },
  sender: user,
});

/** The stamps in `file` (ms since the epoch), one per command run; a line half written is not. */
function stamps(file) {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8").split("\n").slice(0, -1).map(Number);
}

/** Waits until `file` has `count` stamps; returns the last. */
async function stamped(file, count) {
  const deadline = performance.now() + 120_000;
  while (stamps(file).length < count) {
    if (performance.now() > deadline) throw new Error(`no command stamped ${file} in 2 minutes`);
    await sleep(10);
  }
  return stamps(file)[count - 1];
}

/** Waits until `count` warm DevBoxes are set up and waiting in the app's state directory. */
async function poolFull(stateDir, count) {
  const warm = join(stateDir, "warm");
  const deadline = performance.now() + 120_000;
  for (;;) {
    const ready = existsSync(warm)
      ? readdirSync(warm).filter((name) =>
          existsSync(join(warm, name, "checkout", ".git", "clustercode-warm")),
        ).length
      : 0;
    if (ready >= count) return sleep(300);
    if (performance.now() > deadline) throw new Error("the warm pool did not fill in 2 minutes");
    await sleep(20);
  }
}

/** A bare repository `bench/r1` with one commit on main. */
function bareRepository(dir) {
  const work = join(dir, "work");
  const bare = join(dir, "r1.git");
  const git = (cwd, ...args) => execFileSync("git", args, { cwd, stdio: "ignore" });
  mkdirSync(work);
  git(work, "init", "--quiet", "--initial-branch=main");
  writeFileSync(join(work, "README.md"), "# bench\n");
  git(work, "add", "README.md");
  git(work, "-c", "user.name=B", "-c", "user.email=b@example.com", "commit", "-qm", "init");
  git(dir, "clone", "--quiet", "--bare", work, bare);
  return bare;
}

/** Runs the runs of one mode; returns the label → first and /approve → next times (ms). */
async function measure(warm) {
  const dir = mkdtempSync(join(tmpdir(), `cc-warm-${warm ? "warm" : "cold"}-`));
  const github = await startLoopbackGitHub({
    workflow: workflow(dir, warm),
    repositories: { "bench/r1": bareRepository(dir) },
  });
  const stateDir = join(dir, "state");
  mkdirSync(stateDir);
  const env = appEnv(stateDir, github.host, {
    CLUSTERCODE_UNSAFE_LOCAL_DEVBOX: "1",
    CLUSTERCODE_WARM_MAX: "2",
  });
  const { child } = await startApp(env);
  if (process.env.BENCH_PAUSE_MS) await sleep(Number(process.env.BENCH_PAUSE_MS));
  const label = [];
  const approve = [];
  try {
    const total = warm ? RUNS + 1 : RUNS;
    for (let i = 0; i < total; i++) {
      if (warm && i > 0) await poolFull(stateDir, 1);
      const number = 100 + i;
      const sent = Date.now();
      await deliver(env.PORT, "issues", labeled(number));
      const first = await stamped(join(dir, "first"), i + 1);
      // The run releases its DevBox and parks at the approval.
      await sleep(3000);
      if (warm) await poolFull(stateDir, 1);
      const approved = Date.now();
      if (process.env.BENCH_TIMES)
        console.error(`run ${number}: labelled ${sent}, approved ${approved}`);
      await deliver(env.PORT, "issue_comment", approval(number));
      const second = await stamped(join(dir, "second"), i + 1);
      if (warm && i === 0) continue;
      label.push(first - sent);
      approve.push(second - approved);
    }
  } finally {
    await stopApp(child);
    await github.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return { label, approve };
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const show = (values) =>
  `median ${(median(values) / 1000).toFixed(2)} s (${values.map((v) => (v / 1000).toFixed(2)).join(", ")})`;

console.log(
  `runs per mode: ${RUNS}; setup: ${SETUP_SECONDS > 0 ? `sleep ${SETUP_SECONDS}` : "true"}`,
);
// BENCH_MODE=cold or warm runs one mode only.
const modes = [false, true].filter(
  (warm) => (process.env.BENCH_MODE ?? (warm ? "warm" : "cold")) === (warm ? "warm" : "cold"),
);
for (const warm of modes) {
  const { label, approve } = await measure(warm);
  const mode = warm ? "warm (devbox.warm: 1)" : "cold";
  console.log(`${mode}: label → first command: ${show(label)}`);
  console.log(`${mode}: /approve → next node's first command: ${show(approve)}`);
}
