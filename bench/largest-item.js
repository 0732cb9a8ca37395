#!/usr/bin/env node
/* global process, console, URL */
// The largest stored item of the worst-case run: a 65,536-character CJK brief and a
// 300-iteration loop whose gate fails with a full output tail each time. The run is the one
// test/runtime/bounded-items.test.ts drives (vitest, embedded store); that test writes the
// largest item's size and the run item's size, in UTF-8 bytes by DynamoDB's rules, here.
//
//   node bench/largest-item.js [--json]
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const json = process.argv.includes("--json");
const dir = mkdtempSync(join(tmpdir(), "clustercode-largest-"));
const report = join(dir, "largest.json");
const result = spawnSync(
  process.execPath,
  [
    `${root}node_modules/vitest/vitest.mjs`,
    "run",
    "test/runtime/bounded-items.test.ts",
    "-t",
    "300-iteration",
  ],
  {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, CLUSTERCODE_BENCH_LARGEST_ITEM: report },
  },
);
let figures;
try {
  figures = JSON.parse(readFileSync(report, "utf8"));
} catch {
  console.error(result.stdout, result.stderr);
  console.error("the worst-case run did not complete");
  process.exit(2);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const kb = (bytes) => `${(bytes / 1024).toFixed(1)} KB`;
const limit = 350 * 1024;
if (json) {
  const measure = "largest item of the worst-case run (65,536-char CJK brief, 300 iterations)";
  const value = `${kb(figures.largest)} (run item ${kb(figures.run)})`;
  console.log(JSON.stringify({ measure, value, target: "< 350 KB", ok: figures.largest < limit }));
} else {
  console.log(
    `largest item: ${kb(figures.largest)}, run item: ${kb(figures.run)} (target < 350 KB)`,
  );
}
