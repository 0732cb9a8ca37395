/* global process, console, URL */
// Runs every benchmark, side by side in one session, and prints the Markdown table that
// docs/benchmarks.md quotes (written there between its bench markers unless --no-write).
//
//   npm run bench                    the full counts (several minutes)
//   node bench/run-all.js --quick    tiny counts: checks the benchmarks run, measures little
//   --jobs N                         N benchmarks at once (a check; figures need 1, the default)
//
// Exits 1, naming them, when a row's figure could not be read from its benchmark's output.
// Needs `npm run build` first (npm run bench and npm run test:bench do it).
import { execFile } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { cpus, loadavg } from "node:os";
import { promisify } from "node:util";

const run = promisify(execFile);
const root = new URL("../", import.meta.url).pathname;
const quick = process.argv.includes("--quick");
const write = !process.argv.includes("--no-write");
const jobsAt = process.argv.indexOf("--jobs");
const jobs = jobsAt < 0 ? 1 : Number(process.argv[jobsAt + 1]);
if (!Number.isInteger(jobs) || jobs < 1) throw new Error("--jobs needs a positive whole number");

/** Each benchmark: its arguments (full, quick), and how its output becomes table rows. */
const BENCHES = [
  {
    script: "bench/validate-startup.js",
    args: quick ? ["3"] : ["30"],
    rows: (out) => [
      {
        measure: "`clustercode validate` start-up vs `node -e 0`",
        result: `${grab(out, /median ratio\s+([\d.]+×)/)} (${grab(out, /validate <file>\s+median ([\d.]+ ms)/)} vs ${grab(out, /node -e 0\s+median ([\d.]+ ms)/)})`,
        target: "< 6×",
      },
    ],
  },
  ...[1, 8, 100].map((concurrency) => ({
    script: "bench/engine-throughput.js",
    args: quick
      ? ["1", String(concurrency), "0"]
      : [{ 1: "30", 8: "10", 100: "3" }[concurrency], String(concurrency)],
    rows: (out) => [
      {
        measure: `engine transitions/s, ${concurrency} run${concurrency === 1 ? "" : "s"} at once, embedded store`,
        result: `${grab(out, /median transitions\/s: (\d+)/)}/s warm (cold: ${grab(out, /cold transitions\/s.*: (\d+)/)}/s), ${grab(out, /store writes per transition: ([\d.]+) requests/)} write requests (${grab(out, /requests, ([\d.]+) items/)} items) each`,
        target: concurrency === 1 ? "≥ 300/s" : concurrency === 100 ? "not slower than 8" : "—",
      },
    ],
  })),
  {
    script: "bench/webhook-ack.js",
    args: quick ? ["50,100", "1", "4", "1"] : ["100,500", "6", "16", "5"],
    rows: (out) => [
      {
        measure: `webhook ack latency at ${quick ? 50 : 100}/s offered, a delivery the app records`,
        result: `p50 ${grab(out, /app recorded\s+ack p50 ([\d.]+ ms)/)}, p99 ${grab(out, /app recorded\s+ack p50 [\d.]+ ms\s+p99 ([\d.]+ ms)/)}`,
        target: "p99 ≤ 50 ms",
      },
      {
        measure: `the same at ${quick ? 100 : 500}/s offered`,
        result: `p50 ${grab(out, /app recorded @\d+\/s\s+ack p50 ([\d.]+ ms)/)}, p99 ${grab(out, /app recorded @\d+\/s\s+ack p50 [\d.]+ ms\s+p99 ([\d.]+ ms)/)} (the one-\`PutItem\` app: p99 ${grab(out, /durable recorded @\d+\/s\s+ack p50 [\d.]+ ms\s+p99 ([\d.]+ ms)/)})`,
        target: "p99 ≤ 50 ms",
      },
      {
        measure: "recorded deliveries/s vs a bare Probot app doing one `PutItem` each",
        result: grab(out, /app recorded \/ durable: ([\d]+ %)/),
        target: "≥ 150 %",
      },
      {
        measure: "the same vs a bare no-op Probot app",
        result: grab(out, /app recorded \/ bare:\s+([\d]+ %)/),
        target: "—",
      },
      {
        measure:
          "the one-`PutItem` app's server CPU per recorded delivery, as a share of the app's",
        result: grab(out, /durable \/ app server CPU per recorded delivery: ([\d]+ %)/),
        target: "≥ 150 %",
      },
    ],
  },
  {
    script: "bench/admission-check.js",
    args: quick ? ["20", "3"] : ["1000", "30"],
    rows: (out) => [
      {
        measure: `admission check with ${quick ? 20 : "1,000"} unfinished runs of one workflow`,
        result: `${grab(out, /roster\s+median ([\d.]+ ms), (\d+) read/)}, one read (listing the runs whole: ${grab(out, /whole\s+median ([\d.]+ ms)/)})`,
        target: "O(1): one item read",
      },
    ],
  },
  {
    script: "bench/largest-item.js",
    args: [],
    rows: (out) => [
      {
        measure:
          "largest stored item of the worst-case run (65,536-char CJK brief, 300 iterations)",
        result: `${grab(out, /largest item: ([\d.]+ KB)/)} (run item ${grab(out, /run item: ([\d.]+ KB)/)})`,
        target: "< 350 KB",
      },
    ],
  },
  {
    script: "bench/rest-calls.js",
    args: [],
    rows: (out) => [
      {
        measure: "GitHub REST calls per ten-node run without rework",
        result: `${grab(out, /per ten-node run: (\d+)/)} (${grab(out, /\((\d+) of them writes/)} writes)`,
        target: "≤ 40",
      },
    ],
  },
  {
    script: "bench/parked-runs.js",
    args: ["0"],
    rows: (out) => [
      {
        measure: "app RSS with no runs, after a restart (its floor)",
        result: memoryResult(out),
        target: "—",
      },
    ],
  },
  {
    script: "bench/parked-runs.js",
    args: [quick ? "20" : "1000"],
    rows: (out) => [
      {
        measure: `app RSS with ${quick ? 20 : 1000} runs parked at approvals, after a restart`,
        result: memoryResult(out),
        target: "≤ 150 MiB",
      },
      {
        measure: `health check after a restart with ${quick ? 20 : 1000} parked runs`,
        result: `${grab(out, /health check answered after (\d+ ms)/)} (runs picked up after ${grab(out, /picked up \(app idle\) after ([\d.]+ s)/)})`,
        target: "≤ 5 s",
      },
      {
        measure: "GitHub writes of that restart (surfaces already current)",
        result: grab(out, /picked up \(app idle\) after [\d.]+ s, (\d+) GitHub writes/),
        target: "0",
      },
    ],
  },
  ...[1, 2].map((installations) => ({
    script: "bench/run-starts.js",
    args: [quick ? "1" : "6", String(installations)],
    rows: (out) => [
      {
        measure: `run starts/min through a throttled loopback GitHub, ${installations} installation${installations === 1 ? "" : "s"}`,
        result: `${grab(out, /run starts per minute: ([\d.]+)/)}/min, ${grab(out, /secondary rate limits hit: (\d+)/)} secondary limits hit`,
        target: "—",
      },
    ],
  })),
  ...[0, 3].map((setupSeconds) => ({
    script: "bench/warm-starts.js",
    // About half a minute even at one run: the full size only (`npm run bench`).
    args: quick ? undefined : setupSeconds === 0 ? ["7"] : ["5", String(setupSeconds)],
    rows: (out) =>
      [
        ["label → first command", /label → first command: median ([\d.]+ s)/g],
        ["`/approve` → next node's first command", /next node's first command: median ([\d.]+ s)/g],
      ].map(([measure, pattern]) => {
        const [cold, warm] = [...out.matchAll(pattern)].map((match) => match[1]);
        return {
          measure: `${measure}, local DevBoxes, setup ${setupSeconds === 0 ? "`true`" : `\`sleep ${setupSeconds}\``}`,
          result: `warm ${warm ?? "?"} (cold ${cold ?? "?"})`,
          target: "≤ 1 s warm",
        };
      }),
  })),
  ...[[], ["--via-hub"]].map((via) => ({
    script: "bench/devbox-start.js",
    // Generates a 200 MB repository once (minutes): the full size only.
    args: quick ? undefined : ["--runs", "3", ...via, "clone"],
    rows: (out) => [
      {
        measure: `claim → ready, partial vs full clone of 20,000 commits${via.length > 0 ? ", through the hub" : ""}`,
        result: `${grab(out, /partial clone from the mirror ([\d.]+ s)/)} vs ${grab(out, /full clone ([\d.]+ s)/)} (${grab(out, /\(([\d.]+ %); target/)})`,
        target: "≤ 20 %",
      },
    ],
  })),
  {
    script: "bench/devbox-start.js",
    // `npm ci` uncached takes minutes per claim: the full size only.
    args: quick ? undefined : ["--runs", "3", "setup"],
    rows: (out) => [
      {
        measure: "claim → ready with `npm ci` setup, cached vs uncached (setup time)",
        result: `${grab(out, /cached ([\d.]+ s), no setup/)} vs ${grab(out, /uncached ([\d.]+ s)/)} (${grab(out, /\(([\d.]+ %); target ≤ 10/)})`,
        target: "≤ 10 %",
      },
    ],
  },
  {
    script: "bench/ecs-warm-claims.js",
    args: quick ? ["1"] : ["7"],
    rows: (out) => [
      {
        measure: "ECS claim → first command, entrypoint and agent as local processes",
        result: `warm ${grab(out, /warm: median (\d+ ms)/)} (cold ${grab(out, /cold: median (\d+ ms)/)})`,
        target: "—",
      },
    ],
  },
];

function grab(text, pattern) {
  return pattern.exec(text)?.[1] ?? "?";
}

/** RSS, its peak, and the main thread's heap, from bench/parked-runs.js. */
function memoryResult(out) {
  return `${grab(out, /RSS (\d+ MiB)/)} (peak ${grab(out, /\(peak (\d+ MiB)\)/)}, main heap ${grab(out, /heapUsed ([\d.]+ MiB)/)})`;
}

/** Runs one benchmark; its rows. */
async function measure(bench) {
  const command = ["node", bench.script, ...bench.args].join(" ");
  const started = Date.now();
  const { stdout } = await run(process.execPath, [bench.script, ...bench.args], {
    cwd: root,
    maxBuffer: 16 * 1024 * 1024,
  });
  process.stderr.write(`ran ${command} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  return bench.rows(stdout).map((row) => ({ ...row, command }));
}

/** Every benchmark's rows in table order, `jobs` benchmarks at a time. */
async function measureAll() {
  // A benchmark without arguments at this size runs at the full size only (--quick skips it).
  const benches = BENCHES.filter((bench) => bench.args !== undefined);
  const results = new Array(benches.length);
  let next = 0;
  const worker = async () => {
    while (next < benches.length) {
      const at = next++;
      results[at] = await measure(benches[at]);
    }
  };
  await Promise.all(Array.from({ length: jobs }, worker));
  return results.flat();
}

const rows = await measureAll();

const when = new Date().toISOString().slice(0, 16).replace("T", " ");
const table = [
  `Measured ${when} UTC with \`npm run bench\`${quick ? " --quick (tiny counts)" : ""}: Node ${process.version}, ${cpus().length} cores, load average ${loadavg()[0].toFixed(1)} at the end.`,
  "",
  "| measure | result | target | command |",
  "| --- | --- | --- | --- |",
  ...rows.map((r) => `| ${r.measure} | ${r.result} | ${r.target} | \`${r.command}\` |`),
].join("\n");
console.log(table);
const unread = rows.filter((r) => r.result.includes("?"));
if (unread.length > 0) {
  process.stderr.write(
    `figures not read from the benchmarks' output:\n${unread.map((r) => `  ${r.measure} (${r.command})`).join("\n")}\n`,
  );
  process.exitCode = 1;
}

if (write && unread.length === 0) {
  const file = `${root}docs/benchmarks.md`;
  const text = await readFile(file, "utf8");
  const start = "<!-- bench:start -->";
  const end = "<!-- bench:end -->";
  const i = text.indexOf(start);
  const j = text.indexOf(end);
  const block = `${start}\n${table}\n${end}`;
  await writeFile(
    file,
    i >= 0 && j > i
      ? `${text.slice(0, i)}${block}${text.slice(j + end.length)}`
      : text.replace(/\n## /, `\n## Latest run\n\n${block}\n\n## `),
  );
  process.stderr.write(`wrote the table to ${file}\n`);
}
