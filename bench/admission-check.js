/* global process, console, performance */
// The cost of one admission check with many unfinished runs in one repository and workflow, on
// the embedded store: the roster read admission does now, against listing the runs (their
// heads, or whole as admission did before the roster), interleaved.
// Run by hand after `npm run build`: node bench/admission-check.js [runs=1000] [checks=30]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Admission } from "../dist/runtime/admission.js";
import { Runtime } from "../dist/runtime/runtime.js";
import { openStore } from "../dist/store/embedded.js";
import { decodeSettings } from "../dist/settings/index.js";
import { parseWorkflow } from "../dist/workflow/parse.js";

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = "true";
const count = Number(process.argv[2] ?? 1000);
const checks = Number(process.argv[3] ?? 30);

const parsed = parseWorkflow(`version: 1
name: limited
on: { label: go }
admission: { max_active_runs: 1 }
nodes:
  gate: { kind: approval }
edges:
  - { from: gate, to: done, label: approved }
  - { from: gate, to: failed, label: rejected }
`);
if (!parsed.ok) throw new Error(JSON.stringify(parsed.findings));

const dir = mkdtempSync(join(tmpdir(), "clustercode-bench-"));
let reads = 0;
const opened = await openStore({
  stateDir: dir,
  settings: decodeSettings({}).store,
  onRequest: (name) => (name === "GetItem" || name === "Query") && reads++,
});
const { store } = opened;
const runtime = new Runtime({ store, performer: { perform: async () => null }, now: Date.now });
// Runs as the app creates them, with a brief the size of a long issue.
const brief = "An issue body of some length. ".repeat(200);
for (let i = 0; i < count; i++) {
  const runId = `q${String(i).padStart(5, "0")}`;
  const definition = {
    runId,
    workflow: parsed.workflow,
    baseBranch: "main",
    branch: `b/${runId}`,
    brief,
    engines: {},
  };
  await runtime.create(definition, { repo: "o/r" }, 1_000 + i);
}
const admission = new Admission({ store, now: Date.now, holder: "bench" });
await admission.counts("o/r", "limited"); // builds the roster once

const ways = {
  roster: () => admission.counts("o/r", "limited"),
  heads: () => store.listActiveRunHeads({ repo: "o/r" }),
  whole: () => store.listActiveRuns({ repo: "o/r" }),
};
const times = { roster: [], heads: [], whole: [] };
const requests = { roster: 0, heads: 0, whole: 0 };
for (let i = 0; i < checks; i++) {
  for (const [name, check] of Object.entries(ways)) {
    reads = 0;
    const started = performance.now();
    const result = await check();
    times[name].push(performance.now() - started);
    requests[name] = reads;
    const seen = Array.isArray(result) ? result.length : result.queued.length;
    if (seen !== count) throw new Error(`${name} saw ${seen} runs, not ${count}`);
  }
}
await opened.close();
rmSync(dir, { recursive: true, force: true });

const median = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
console.log(`${count} unfinished runs of one workflow, ${checks} checks each, interleaved`);
for (const name of Object.keys(ways)) {
  console.log(
    `${name.padEnd(6)} median ${median(times[name]).toFixed(1)} ms, ${requests[name]} read request(s)`,
  );
}
