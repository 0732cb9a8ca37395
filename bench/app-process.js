/* global process, fetch, setTimeout, URL, performance */
// The GitHub App as a child process (as `npm start` runs it) for the benchmarks, talking to
// a loopback GitHub (bench/loopback-github.js) as to a GitHub Enterprise Server over http.
import { spawn } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));

/** The key the app signs its JWTs with (the loopback GitHub does not check them). */
const { privateKey } = generateKeyPairSync("rsa", {
  modulusLength: 2048,
  privateKeyEncoding: { type: "pkcs1", format: "pem" },
  publicKeyEncoding: { type: "spki", format: "pem" },
});

/** The webhook secret the app verifies deliveries with. */
export const WEBHOOK_SECRET = "bench";

/** The app's environment: its state in `stateDir`, GitHub at `githubHost`, more in `extra`. */
export function appEnv(stateDir, githubHost, extra = {}) {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    APP_ID: "1",
    PRIVATE_KEY: privateKey,
    WEBHOOK_SECRET,
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "fatal",
    HOST: "127.0.0.1",
    PORT: String(20000 + (process.pid % 20000)),
    GHE_HOST: githubHost,
    GHE_PROTOCOL: "http",
    CLUSTERCODE_STATE_DIR: stateDir,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
    ...extra,
  };
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The benchmarks' workflow: one approval, so every run it starts parks there. */
export const GATE_WORKFLOW = `version: 1
name: gate
on:
  label: clustercode
nodes:
  ship: { kind: approval }
edges:
  - { from: ship, to: done, label: approved }
  - { from: ship, to: failed, label: rejected }
`;

/**
 * The Node flags `npm start` gives the app (package.json's start script, which the Dockerfile's
 * CMD repeats), so that the benchmarks measure the app as it ships.
 */
export const START_FLAGS = (() => {
  const script = JSON.parse(readFileSync(`${root}package.json`, "utf8")).scripts.start;
  const words = script.trim().split(/\s+/);
  if (words[0] !== "node" || words.at(-1) !== "dist/github/main.js")
    throw new Error(`npm start runs something other than node … dist/github/main.js: ${script}`);
  return words.slice(1, -1);
})();

/**
 * Starts the app; resolves once its health check answers, with the ms that took. `nodeFlags`
 * come before `npm start`'s own (a benchmark's probe). An app that exits first rejects, with
 * the code `EADDRINUSE` when its port was taken.
 */
export async function startApp(env, nodeFlags = []) {
  const started = performance.now();
  const args = [...nodeFlags, ...START_FLAGS, `${root}dist/github/main.js`];
  const child = spawn(process.execPath, args, {
    cwd: env.CLUSTERCODE_STATE_DIR,
    env,
    stdio: ["ignore", process.env.BENCH_LOG_LEVEL ? "inherit" : "ignore", "pipe"],
  });
  // Passed on as it comes; its last lines say why an app that exited at start did.
  let stderrTail = "";
  child.stderr.on("data", (chunk) => {
    process.stderr.write(chunk);
    stderrTail = (stderrTail + chunk).slice(-4096);
  });
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      const error = new Error(`the app exited with ${child.exitCode ?? child.signalCode}`);
      // Its port was taken since it was chosen: the caller may choose another.
      if (stderrTail.includes("EADDRINUSE")) error.code = "EADDRINUSE";
      throw error;
    }
    const ok = await fetch(`http://127.0.0.1:${env.PORT}/healthz`)
      .then((res) => res.ok)
      .catch(() => false);
    if (ok) return { child, healthMs: performance.now() - started, started };
    await sleep(5);
  }
}

/** Stops the app as the container runtime does (SIGTERM) and waits for it to exit. */
export async function stopApp(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}

/** The resident set size of process `pid`, in MiB. */
export function rssMiB(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
}

/** The peak resident set size of process `pid` so far, in MiB. */
export function peakRssMiB(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
}

/** CPU time process `pid` used so far, in clock ticks (user + system, every thread). */
function cpuTicks(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  return Number(fields[11] ?? 0) + Number(fields[12] ?? 0);
}

/**
 * Waits until process `pid` is idle: under 5 % of a core for a whole second (its periodic
 * sweeps cost less). Resolves with `performance.now()` at the start of that second.
 */
export async function waitForIdle(pid) {
  let last = cpuTicks(pid);
  for (;;) {
    const at = performance.now();
    await sleep(1000);
    const now = cpuTicks(pid);
    if (now - last <= 5) return at;
    last = now;
  }
}
