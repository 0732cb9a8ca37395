/* global process, console, performance, setTimeout, structuredClone, Buffer, URL */
// Webhook acknowledgement latency (p50/p99 at a fixed rate) and throughput (closed loop) of the
// ClusterCode app against a bare Probot app with a no-op handler, and against a bare app whose
// handler makes the one durable write a safe intake needs (a conditional PutItem of the
// delivery into the same embedded store). Each server is its own child process on 127.0.0.1.
// The app is measured on two kinds of delivery:
// - recorded: a check-run button press (for a run that does not exist), recorded before the
//   ack, then processed (one store read, nothing to call on GitHub) and marked processed;
// - ignored: a comment without a command, which the app acknowledges without recording.
// The REST calls per lifecycle run are counted by test/github/rest-budget.test.ts.
// The sender is lean, so that it leaves the cores to the server it measures: `node:http` on
// kept-alive connections, each body signed once (the signature covers the body alone). With
// `fetch` and a signature per request, it spent about 1.1 ms of CPU a delivery, twice a bare
// Probot app's 0.56 ms; now about 0.4 ms.
// Run by hand after `npm run build`:
//   node bench/webhook-ack.js [rate/s] [seconds] [concurrency] [rounds]
// The rate may be a list (`100,500`): the latency is measured at each, the first one printed as
// the main line.
import { execFileSync, spawn } from "node:child_process";
import { createHmac, generateKeyPairSync, randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { Agent, createServer, request } from "node:http";
import { createRequire } from "node:module";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = "true";
const SECRET = "bench-secret";
/** Linux's clock ticks per second, in which /proc reports CPU time. */
const CLOCK_TICKS = 100;
/** CPUs to keep the sender and the server apart on, where `taskset` can (see pinApart). */
let cpus;
/** The sender's connections, kept alive between its requests. */
const agent = new Agent({ keepAlive: true });

if (process.argv[2] === "serve") await serve(process.argv[3]);
else await main();

async function serve(kind) {
  const { Probot, createNodeMiddleware } = await import("probot");
  const { privateKey } = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    privateKeyEncoding: { type: "pkcs1", format: "pem" },
    publicKeyEncoding: { type: "spki", format: "pem" },
  });
  const probot = new Probot({ appId: 1, privateKey, secret: SECRET, logLevel: "fatal" });
  let appFn = (app) => app.onAny(async () => {});
  const dir = mkdtempSync(join(tmpdir(), "cc-ack-"));
  if (kind === "app") {
    const { AppHost } = await import("../dist/github/setup/app-host.js");
    const { clusterCodeApp } = await import("../dist/github/intake/app.js");
    const { decodeSettings } = await import("../dist/settings/index.js");
    const host = await AppHost.open({
      stateDir: dir,
      settings: decodeSettings({}),
      env: { PATH: process.env.PATH },
      log: { error: (message, error) => console.error(message, error) },
    });
    appFn = clusterCodeApp(host);
  } else if (kind === "durable") {
    const { openStore } = await import("../dist/store/embedded.js");
    const { decodeSettings } = await import("../dist/settings/index.js");
    const { store } = await openStore({ stateDir: dir, settings: decodeSettings({}).store });
    appFn = (app) =>
      app.onAny(async (context) => {
        await store.recordDelivery({
          deliveryId: context.id,
          event: context.name,
          payload: context.payload,
          receivedAt: Date.now(),
        });
      });
  }
  const middleware = await createNodeMiddleware(appFn, { probot });
  const server = createServer((req, res) => middleware(req, res));
  server.listen(0, "127.0.0.1", () => console.log(`port ${server.address().port}`));
  process.on("SIGTERM", () => {
    rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  });
}

/**
 * The machine's CPUs, when it is Linux with two or more of them and `taskset` works; else none.
 */
function cpuList() {
  if (process.platform !== "linux" || availableParallelism() < 2) return undefined;
  try {
    execFileSync("taskset", ["-pc", String(process.pid)], { stdio: "ignore" });
    return `0-${availableParallelism() - 1}`;
  } catch {
    return undefined;
  }
}

/**
 * For the closed-loop throughput, the server (all its threads) runs on CPU 1 alone and this
 * process, the sender, on CPU 0: a server's throughput is then its own, not what the sender
 * leaves of the cores. The latencies at a fixed rate are measured with the CPUs shared, as a
 * server would have them. Returns what puts the CPUs back.
 */
function pinApart(serverPid) {
  if (cpus === undefined) return () => undefined;
  const pin = (pid, list) =>
    execFileSync("taskset", ["-a", "-pc", list, String(pid)], { stdio: "ignore" });
  pin(process.pid, "0");
  pin(serverPid, "1");
  return () => {
    pin(process.pid, cpus);
    pin(serverPid, cpus);
  };
}

function start(kind) {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), "serve", kind], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    child.stdout.on("data", (chunk) => {
      const match = /port (\d+)/.exec(String(chunk));
      if (match) resolve({ child, url: `http://127.0.0.1:${match[1]}/api/github/webhooks` });
    });
    child.once("exit", (code) => reject(new Error(`${kind} server exited ${code}`)));
  });
}

/** The two deliveries, each { event, body, signature }: one the app records, one it ignores. */
function deliveries() {
  const require = createRequire(import.meta.url);
  const groups = require("@octokit/webhooks-examples/api.github.com/index.json");
  const example = (event, action) =>
    structuredClone(groups.find((g) => g.name === event).examples.find((e) => e.action === action));
  const button = example("check_run", "requested_action");
  button.installation = { id: 1 };
  button.requested_action = { identifier: "approve" };
  button.check_run.external_id = "rnonexistent/1";
  const chatter = example("issue_comment", "created");
  chatter.installation = { id: 1 };
  chatter.comment.body = "Looks good to me, thanks!";
  const signed = (event, payload) => {
    const body = JSON.stringify(payload);
    const signature = `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`;
    return { event, body, signature };
  };
  return { recorded: signed("check_run", button), ignored: signed("issue_comment", chatter) };
}

/** Posts one delivery (a fresh delivery id each time); resolves with its ack time in ms. */
function send(url, { event, body, signature }) {
  const started = performance.now();
  const { hostname, port, pathname } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        agent,
        hostname,
        port,
        path: pathname,
        method: "POST",
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
          "x-github-event": event,
          "x-github-delivery": randomUUID(),
          "x-hub-signature-256": signature,
        },
      },
      (response) => {
        response.resume();
        response.once("end", () =>
          response.statusCode === 200
            ? resolve(performance.now() - started)
            : reject(new Error(`status ${response.statusCode}`)),
        );
      },
    );
    req.once("error", reject);
    req.end(body);
  });
}

async function atRate(url, delivery, rate, seconds) {
  let failed = 0;
  const latencies = [];
  const pending = [];
  const begin = performance.now();
  for (let i = 0; i < rate * seconds; i++) {
    const due = begin + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    // A server past its capacity may refuse connections: counted, never a latency.
    pending.push(
      send(url, delivery).then(
        (ms) => latencies.push(ms),
        () => failed++,
      ),
    );
  }
  await Promise.all(pending);
  latencies.sort((a, b) => a - b);
  const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  return { p50: at(0.5), p99: at(0.99), failed };
}

/** CPU time (ms, all threads) a process has used so far, from Linux's /proc; NaN elsewhere. */
function cpuMs(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return Number.NaN;
  }
}

/**
 * Deliveries per second from `concurrency` senders, and the server's CPU ms per delivery (with
 * the sender and the server on CPUs of their own where it can: see pinApart).
 */
async function closedLoop(url, delivery, concurrency, seconds, pid) {
  const unpin = pinApart(pid);
  const cpuBefore = cpuMs(pid);
  let done = 0;
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        await send(url, delivery);
        done++;
      }
    }),
  );
  const cpuPerDelivery = (cpuMs(pid) - cpuBefore) / done;
  unpin();
  return { throughput: done / seconds, cpuPerDelivery };
}

async function main() {
  cpus = cpuList();
  const [rate, ...moreRates] = String(process.argv[2] ?? 100)
    .split(",")
    .map(Number);
  const seconds = Number(process.argv[3] ?? 10);
  const concurrency = Number(process.argv[4] ?? 16);
  const rounds = Number(process.argv[5] ?? 3);
  const { recorded, ignored } = deliveries();
  const configs = [
    ["bare", "recorded", recorded],
    ["durable", "recorded", recorded],
    ["app", "recorded", recorded],
    ["app", "ignored", ignored],
  ];
  // Rounds interleave the servers, so that a noisy moment of the machine hits them alike.
  const results = new Map(configs.map(([kind, what]) => [`${kind} ${what}`, []]));
  for (let round = 0; round < rounds; round++) {
    for (const [kind, what, delivery] of configs) {
      const { child, url } = await start(kind);
      try {
        for (let i = 0; i < 50; i++) await send(url, delivery); // warm up
        const latency = await atRate(url, delivery, rate, seconds);
        // Before the other rates: a rate past the server's capacity leaves a backlog behind.
        const loop = await closedLoop(url, delivery, concurrency, Math.min(seconds, 5), child.pid);
        const more = {};
        for (const other of moreRates) {
          const { p50, p99, failed } = await atRate(url, delivery, other, seconds);
          Object.assign(more, {
            [`p50@${other}`]: p50,
            [`p99@${other}`]: p99,
            [`failed@${other}`]: failed,
          });
        }
        results.get(`${kind} ${what}`).push({ ...latency, ...more, ...loop });
      } finally {
        child.kill("SIGTERM");
      }
    }
  }
  const median = (name, field) => {
    const values = results
      .get(name)
      .map((r) => r[field])
      .sort((a, b) => a - b);
    return values[Math.floor(values.length / 2)];
  };
  for (const name of results.keys()) {
    console.log(
      `${name.padEnd(16)}  ack p50 ${median(name, "p50").toFixed(1)} ms  p99 ${median(name, "p99").toFixed(1)} ms at ${rate}/s  ` +
        `throughput ${median(name, "throughput").toFixed(0)}/s, server CPU ${median(name, "cpuPerDelivery").toFixed(2)} ms each (${concurrency} concurrent; medians of ${rounds})`,
    );
  }
  for (const other of moreRates) {
    for (const name of results.keys()) {
      console.log(
        `${`${name} @${other}/s`.padEnd(24)}  ack p50 ${median(name, `p50@${other}`).toFixed(1)} ms  p99 ${median(name, `p99@${other}`).toFixed(1)} ms  refused ${median(name, `failed@${other}`)} (medians of ${rounds})`,
      );
    }
  }
  const percent = (a, b) =>
    `${((median(a, "throughput") / median(b, "throughput")) * 100).toFixed(0)} %`;
  console.log(`app recorded / bare:    ${percent("app recorded", "bare recorded")}`);
  console.log(`app ignored / bare:     ${percent("app ignored", "bare recorded")}`);
  console.log(`durable / bare:         ${percent("durable recorded", "bare recorded")}`);
  console.log(`app recorded / durable: ${percent("app recorded", "durable recorded")}`);
  console.log(
    cpus !== undefined
      ? "throughput: each server on CPU 1, the sender on CPU 0; latencies: the CPUs shared"
      : "servers and the sender share the CPUs: throughput ratios understate a server's own gain",
  );
  const cpuRatio =
    median("durable recorded", "cpuPerDelivery") / median("app recorded", "cpuPerDelivery");
  console.log(`durable / app server CPU per recorded delivery: ${(cpuRatio * 100).toFixed(0)} %`);
}
