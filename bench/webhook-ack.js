/* global process, console, performance, fetch, setTimeout, structuredClone */
// Webhook acknowledgement latency (p50/p99 at a fixed rate) and throughput (closed loop) of the
// ClusterCode app (delivery recorded in the embedded store before the ack) against a bare
// Probot app with a no-op handler, each served by its own child process on 127.0.0.1.
// The REST calls per lifecycle run are counted by test/github/rest-budget.test.ts.
// Run by hand after `npm run build`: node bench/webhook-ack.js [rate/s] [seconds] [concurrency]
import { spawn } from "node:child_process";
import { createHmac, generateKeyPairSync, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = "true";
const SECRET = "bench-secret";

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
  let dir;
  if (kind === "app") {
    const { AppHost } = await import("../dist/github/app-host.js");
    const { clusterCodeApp } = await import("../dist/github/app.js");
    dir = mkdtempSync(join(tmpdir(), "cc-ack-"));
    const host = await AppHost.open({
      stateDir: dir,
      env: { PATH: process.env.PATH },
      log: { error: (message, error) => console.error(message, error) },
    });
    appFn = clusterCodeApp(host);
  }
  const middleware = await createNodeMiddleware(appFn, { probot });
  const server = createServer((req, res) => middleware(req, res));
  server.listen(0, "127.0.0.1", () => console.log(`port ${server.address().port}`));
  process.on("SIGTERM", () => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  });
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

function payload() {
  const require = createRequire(import.meta.url);
  const groups = require("@octokit/webhooks-examples/api.github.com/index.json");
  const star = structuredClone(groups.find((g) => g.name === "star").examples[0]);
  delete star.installation; // recorded and acknowledged, then nothing to call on GitHub
  return JSON.stringify(star);
}

async function send(url, body) {
  const started = performance.now();
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-github-event": "star",
      "x-github-delivery": randomUUID(),
      "x-hub-signature-256": `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`,
    },
    body,
  });
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`status ${response.status}`);
  return performance.now() - started;
}

async function atRate(url, body, rate, seconds) {
  const latencies = [];
  const pending = [];
  const begin = performance.now();
  for (let i = 0; i < rate * seconds; i++) {
    const due = begin + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    pending.push(send(url, body).then((ms) => latencies.push(ms)));
  }
  await Promise.all(pending);
  latencies.sort((a, b) => a - b);
  const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  return { p50: at(0.5), p99: at(0.99) };
}

async function closedLoop(url, body, concurrency, seconds) {
  let done = 0;
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        await send(url, body);
        done++;
      }
    }),
  );
  return done / seconds;
}

async function main() {
  const rate = Number(process.argv[2] ?? 100);
  const seconds = Number(process.argv[3] ?? 10);
  const concurrency = Number(process.argv[4] ?? 16);
  const body = payload();
  const results = {};
  for (const kind of ["bare", "app"]) {
    const { child, url } = await start(kind);
    try {
      for (let i = 0; i < 50; i++) await send(url, body); // warm up
      const latency = await atRate(url, body, rate, seconds);
      const throughput = await closedLoop(url, body, concurrency, Math.min(seconds, 5));
      results[kind] = { ...latency, throughput };
      console.log(
        `${kind.padEnd(4)}  ack p50 ${latency.p50.toFixed(1)} ms  p99 ${latency.p99.toFixed(1)} ms at ${rate}/s  ` +
          `throughput ${throughput.toFixed(0)}/s (${concurrency} concurrent)`,
      );
    } finally {
      child.kill("SIGTERM");
    }
  }
  const ratio = results.app.throughput / results.bare.throughput;
  console.log(`app/bare throughput ${(ratio * 100).toFixed(0)} %`);
}
