#!/usr/bin/env node
/* global process, console, fetch, performance */
// Run starts per minute through a throttled GitHub: the app (`node dist/github/main.js`, at
// GitHub's pace: one write a second, one notifying write every 3 s, per installation) against
// a loopback GitHub that refuses content creation faster than 80 a minute per installation
// (403 secondary rate limit with retry-after, as GitHub does). `runs` issues are labelled at
// once, spread over `installations`; a run counts as started when its status comment is
// created. Each run parks at an approval (no DevBox).
//
//   node bench/run-starts.js [runs per installation] [installations]   default 6 1; needs `npm run build`
import { createHmac, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { appEnv, GATE_WORKFLOW, sleep, startApp, stopApp, WEBHOOK_SECRET } from "./app-process.js";
import { startLoopbackGitHub } from "./loopback-github.js";

const PER_INSTALLATION = Number(process.argv[2] ?? 6);
const INSTALLATIONS = Number(process.argv[3] ?? 1);
/** GitHub's secondary limit: 80 content-creating requests a minute per installation. */
const CREATE_GAP_MS = 60_000 / 80;

/** An `issues.labeled` delivery for issue `issue` of installation `installation`'s repository. */
function labeled(installation, issue) {
  return {
    action: "labeled",
    label: { name: "clustercode" },
    issue: { number: issue, title: `Bench issue ${issue}`, body: "Start a run." },
    repository: {
      name: `r${installation}`,
      full_name: `bench/r${installation}`,
      owner: { login: "bench" },
      default_branch: "main",
    },
    installation: { id: installation },
    sender: { login: "alice", type: "User" },
  };
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

const dir = mkdtempSync(join(tmpdir(), "cc-starts-"));
const github = await startLoopbackGitHub({ workflow: GATE_WORKFLOW, createGapMs: CREATE_GAP_MS });
const env = appEnv(dir, github.host);
const { child } = await startApp(env);
try {
  const total = PER_INSTALLATION * INSTALLATIONS;
  const sent = Date.now();
  const deliveries = [];
  for (let i = 0; i < total; i++) {
    deliveries.push(deliver(env.PORT, "issues", labeled((i % INSTALLATIONS) + 1, 100 + i)));
  }
  await Promise.all(deliveries);
  const deadline = performance.now() + 10 * 60_000;
  while (github.statusCreated.size < total) {
    if (performance.now() > deadline) throw new Error("the runs did not all start in 10 minutes");
    await sleep(50);
  }
  const lastStart = Math.max(...github.statusCreated.values());
  const seconds = (lastStart - sent) / 1000;
  const perMinute = (total / seconds) * 60;
  console.log(
    `runs: ${total} over ${INSTALLATIONS} installation(s), labelled at once; GitHub allows 80 creates/min per installation`,
  );
  console.log(`all started ${seconds.toFixed(1)} s after the deliveries were sent`);
  console.log(`run starts per minute: ${perMinute.toFixed(1)}`);
  console.log(
    `secondary rate limits hit: ${github.counts.refused}, content created: ${github.counts.creates}`,
  );
} finally {
  await stopApp(child);
  await github.close();
  rmSync(dir, { recursive: true, force: true });
}
