#!/usr/bin/env node
/* global process, console, URL */
// GitHub REST calls of a ten-node run without rework (token requests aside): the lifecycle
// test/github/rest-budget.test.ts drives (vitest, the app over a fake GitHub that records every
// request) prints its count and the calls by route; this runs it and reports them.
//
//   node bench/rest-calls.js [--json]
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const result = spawnSync(
  process.execPath,
  [`${root}node_modules/vitest/vitest.mjs`, "run", "test/github/rest-budget.test.ts"],
  { cwd: root, encoding: "utf8", env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" } },
);
const count = /REST calls for a ten-node run: (\d+)/.exec(result.stdout)?.[1];
if (count === undefined || result.status !== 0) {
  console.error(result.stdout, result.stderr);
  console.error("the lifecycle run did not complete");
  process.exit(2);
}
const writes = [...result.stdout.matchAll(/'(POST|PATCH|PUT|DELETE) [^']+': (\d+)/g)].reduce(
  (sum, match) => sum + Number(match[2]),
  0,
);
if (process.argv.includes("--json")) {
  console.log(JSON.stringify({ calls: Number(count), writes }));
} else {
  console.log(`REST calls per ten-node run: ${count} (${writes} of them writes; target ≤ 40)`);
}
