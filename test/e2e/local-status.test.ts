import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cliEnv, makeRepo, runCli, summaryOf } from "./local-cli.js";

const GATED = `version: 1
name: gated
on: { label: go }
nodes:
  build: { kind: run, run: "echo built > built.txt" }
  ship: { kind: approval }
edges:
  - { from: build, to: ship }
  - { from: ship, to: done, label: approved }
  - { from: ship, to: build, label: rejected, back: true, max_traversals: 2 }
`;

/** A run's line: id, workflow, status, start (local time to the minute), duration, branch. */
const line = (runId: string, status: string, branch: string) =>
  `${runId} +gated +${status} +\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d +\\S+ +${branch}`;

describe("clustercode status (local)", () => {
  it("shows a run waiting at an approval, which approval, and each node's visits numbered", async () => {
    const { repo, state, root } = makeRepo();
    writeFileSync(join(root, "gated.yml"), GATED);
    const env = cliEnv();
    const run = await runCli(
      ["run", join(root, "gated.yml"), "--repo", repo, "--state-dir", state, "--format", "json"],
      { cwd: repo, env },
    );
    expect(run.code, run.stderr).toBe(3);
    const { run: runId, branch } = summaryOf(run);
    // Rejected, the run goes back to build: the second time through is visit 2 of each node.
    const rejected = await runCli(["reject", runId, "--state-dir", state], { cwd: repo, env });
    expect(rejected.code, rejected.stderr).toBe(3);
    const status = await runCli(["status", runId, "--state-dir", state], { cwd: repo, env });
    expect(status.code, status.stderr).toBe(0);
    const lines = status.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(
      new RegExp(`^${line(runId, "awaiting_input", branch)}  \\(waiting for approval of ship\\)$`),
    );
    expect(lines.slice(1).map((text) => text.replace(/ +\S+( +→.*)?$/, "$1"))).toEqual([
      "  build                visit 1  attempt 1  succeeded",
      "  ship                 visit 1  attempt 1  rejected",
      "  build                visit 2  attempt 1  succeeded",
      "  ship                 visit 2  attempt 1  awaiting approval",
    ]);
    // From the repository, status lists its runs under a header.
    const list = await runCli(["status", "--state-dir", state], { cwd: repo, env });
    const [header, row] = list.stdout.split("\n");
    expect(header).toMatch(/^RUN +WORKFLOW +STATUS +STARTED +DURATION +BRANCH$/);
    expect(row).toMatch(
      new RegExp(`^${line(runId, "awaiting_input", branch)}  \\(waiting for approval of ship\\)$`),
    );
  }, 90_000);

  it("outside a repository, without a run, is a usage error (exit 2)", async () => {
    const { root, state } = makeRepo();
    const outside = await runCli(["status", "--state-dir", state], { cwd: root, env: cliEnv() });
    expect(outside.code).toBe(2);
    expect(outside.stderr).toBe(
      `clustercode status: ${root} is not inside a git repository: give a RUN, or --repo DIR for a repository's runs\n`,
    );
  }, 30_000);
});
