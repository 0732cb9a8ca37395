import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);

describe("npm run bench", () => {
  it("runs every benchmark and prints one table with a figure in every row", async () => {
    const { stdout } = await run(process.execPath, ["bench/run-all.js", "--quick", "--no-write"], {
      cwd: new URL("../../", import.meta.url).pathname,
      timeout: 480_000,
    });
    const rows = stdout
      .split("\n")
      .filter(
        (line) =>
          line.startsWith("| ") && !line.startsWith("| measure") && !line.startsWith("| ---"),
      );
    expect(rows.map((row) => row.split(" | ")[0])).toEqual([
      "| `clustercode validate` start-up vs `node -e 0`",
      "| engine transitions/s, 1 run at once, embedded store",
      "| engine transitions/s, 8 runs at once, embedded store",
      "| engine transitions/s, 100 runs at once, embedded store",
      "| webhook ack latency at 50/s offered, a delivery the app records",
      "| the same at 100/s offered",
      "| recorded deliveries/s vs a bare Probot app doing one `PutItem` each",
      "| the same vs a bare no-op Probot app",
      "| the one-`PutItem` app's server CPU per recorded delivery, as a share of the app's",
      "| admission check with 20 unfinished runs of one workflow",
      "| largest stored item of the worst-case run (65,536-char CJK brief, 300 iterations)",
      "| GitHub REST calls per ten-node run without rework",
      "| app RSS with no runs, after a restart (its floor)",
      "| app RSS with 20 runs parked at approvals, after a restart",
      "| health check after a restart with 20 parked runs",
      "| GitHub writes of that restart (surfaces already current)",
      "| run starts/min through a throttled loopback GitHub, 1 installation",
      "| run starts/min through a throttled loopback GitHub, 2 installations",
    ]);
    // Every figure was read from its benchmark's output.
    for (const row of rows) expect(row).not.toMatch(/\?/);
  }, 540_000);
});
