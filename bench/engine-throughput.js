/* global process, console, performance, setImmediate */
// Engine transitions per second and store writes per transition on the embedded store
// (dynalite persisted on disk), for a 20-node command-only workflow of `true` commands.
// DevBox work is excluded: a stand-in performer answers each DevBox effect at once.
// Rounds are counted once the process has made a number of transitions (5,000 by default) that
// are not: a long-running app runs at the warm rate, its code compiled and optimised. A cold
// process runs far slower: its rate rose round after round for some 4,000 transitions (from
// about 200/s to about 500/s for one run), as V8 compiled more of the SDK's, Node's and
// dynalite's code; the first round's rate is printed as the cold rate.
// Run by hand after `npm run build`:
//   node bench/engine-throughput.js [rounds] [concurrent runs] [warm-up transitions]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Runtime } from "../dist/runtime/runtime.js";
import { openStore } from "../dist/store/embedded.js";
import { decodeSettings } from "../dist/settings/index.js";
import { parseWorkflow } from "../dist/workflow/parse.js";

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = "true";
const rounds = Number(process.argv[2] ?? 5);
const concurrency = Number(process.argv[3] ?? 1);
const warmUpTransitions = Number(process.argv[4] ?? 5_000);
const nodes = Array.from({ length: 20 }, (_, i) => `  n${i}: { kind: run, run: "true" }`).join(
  "\n",
);
const edges = Array.from({ length: 19 }, (_, i) => `  - { from: n${i}, to: n${i + 1} }`).join("\n");
const parsed = parseWorkflow(
  `version: 1\nname: bench\non: { label: go }\nnodes:\n${nodes}\nedges:\n${edges}\n`,
);
if (!parsed.ok) throw new Error(JSON.stringify(parsed.findings));

const dir = mkdtempSync(join(tmpdir(), "clustercode-bench-"));
const writes = new Set(["PutItem", "BatchWriteItem", "UpdateItem", "DeleteItem"]);
let writeCount = 0;
let itemCount = 0;
const opened = await openStore({
  stateDir: dir,
  settings: decodeSettings({}).store,
  onRequest: (name, items) => {
    if (!writes.has(name)) return;
    writeCount++;
    itemCount += items;
  },
});
const store = opened.store;

let runtime;
const performer = {
  async perform(runId, effect) {
    const at = Date.now();
    const later = (event) => setImmediate(() => void runtime.deliver(runId, event));
    if (effect.type === "devbox.claim")
      later({ type: "devbox.ready", devboxId: effect.devboxId, ok: true, at });
    if (effect.type === "command.dispatch") {
      const result = {
        commandId: effect.request.commandId,
        exitCode: 0,
        output: "",
        durationMs: 0,
      };
      later({ type: "command.finished", devboxId: effect.devboxId, result, at });
    }
    if (effect.type === "timer.set")
      await store.putTimer({ runId, timerId: effect.timerId, dueAt: effect.dueAt });
    if (effect.type === "timer.cancel") await store.deleteTimer(runId, effect.timerId);
    return null;
  },
};
const finished = new Map();
runtime = new Runtime({
  store,
  performer,
  now: Date.now,
  onTransition: (run) => {
    if (run.state.status === "succeeded") finished.get(run.state.runId)?.();
  },
});

async function oneRun(r) {
  const runId = `bench${r}`;
  const definition = {
    runId,
    workflow: parsed.workflow,
    baseBranch: "main",
    branch: `b/${runId}`,
    brief: "",
    engines: {},
  };
  const done = new Promise((resolve) => finished.set(runId, resolve));
  await runtime.start(definition, { repo: "bench" });
  await done;
  return (await store.getRun(runId)).version - 1;
}

const results = [];
let warmedUp = 0;
let coldPerSecond;
for (let round = 0; results.length < rounds; round++) {
  writeCount = 0;
  itemCount = 0;
  const started = performance.now();
  const transitions = (
    await Promise.all(
      Array.from({ length: concurrency }, (_, c) => oneRun(round * concurrency + c)),
    )
  ).reduce((a, b) => a + b, 0);
  await runtime.idle();
  const ms = performance.now() - started;
  coldPerSecond ??= (transitions / ms) * 1000;
  // At least one round warms up, however few transitions are asked for.
  if (round === 0 || warmedUp < warmUpTransitions) {
    warmedUp += transitions;
    continue;
  }
  const timerWrites = 2 * concurrency; // each run's wall-clock timer: set at start, deleted at the end
  results.push({
    transitions,
    ms,
    perSecond: (transitions / ms) * 1000,
    writesPerTransition: (writeCount - concurrency - timerWrites) / transitions,
    itemsPerTransition: (itemCount - concurrency - timerWrites) / transitions,
  });
}
await opened.close();
rmSync(dir, { recursive: true, force: true });

const median = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
console.log(
  `rounds: ${rounds} of ${concurrency} concurrent run(s), transitions per round: ${results[0].transitions}, after ${warmedUp} not counted`,
);
console.log(`cold transitions/s (the process's first round): ${coldPerSecond.toFixed(0)}`);
console.log(`median transitions/s: ${median(results.map((r) => r.perSecond)).toFixed(0)}`);
console.log(
  `median per-transition overhead: ${median(results.map((r) => r.ms / r.transitions)).toFixed(2)} ms`,
);
console.log(
  `store writes per transition: ${median(results.map((r) => r.writesPerTransition)).toFixed(2)} requests, ${median(results.map((r) => r.itemsPerTransition)).toFixed(2)} items (createRun and the wall-clock timer excluded)`,
);
