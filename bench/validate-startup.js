#!/usr/bin/env node
/* global process, console, URL */
// How much slower is `clustercode validate` than starting Node at all?
//
//   npm run build && node bench/validate-startup.js [runs] [file]
//
// Runs `node dist/cli/main.js validate FILE` and `node -e 0` as processes, interleaved so that
// both see the same machine load, and prints the median of each and the median of the per-pair
// ratios. The target is a ratio under 6; a miss is printed, and the exit code stays 0.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const cli = `${root}dist/cli/main.js`;
const runs = Number(process.argv[2] ?? 30);
const file = process.argv[3] ?? `${root}workflows-schema/examples/lifecycle.yml`;
const TARGET = 6;

if (!existsSync(cli)) {
  console.error(`${cli} is missing: run "npm run build" first`);
  process.exit(2);
}

/** Milliseconds one process takes from spawn to exit. */
function time(args) {
  const start = process.hrtime.bigint();
  const result = spawnSync(process.execPath, args, { stdio: ["ignore", "ignore", "pipe"] });
  const elapsed = Number(process.hrtime.bigint() - start) / 1e6;
  if (result.status !== 0) {
    console.error(`node ${args.join(" ")} exited ${result.status}:\n${result.stderr}`);
    process.exit(2);
  }
  return elapsed;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

// One warm-up of each, so the first measured run does not pay for a cold file cache.
time(["-e", "0"]);
time([cli, "validate", file]);

const bare = [];
const validate = [];
const ratios = [];
for (let i = 0; i < runs; i++) {
  const b = time(["-e", "0"]);
  const v = time([cli, "validate", file]);
  bare.push(b);
  validate.push(v);
  ratios.push(v / b);
}

const ratio = median(ratios);
console.log(`node ${process.version}, ${runs} runs each, interleaved`);
console.log(`node -e 0                      median ${median(bare).toFixed(1)} ms`);
console.log(`clustercode validate <file>    median ${median(validate).toFixed(1)} ms`);
// A figure for a person to read beside its target, not a check: the ratio moves with the
// machine's load and its `node -e 0`, so a miss here never fails `npm run test:bench`.
console.log(
  `median ratio                   ${ratio.toFixed(2)}× (target < ${TARGET}×${ratio < TARGET ? "" : ", missed"})`,
);
