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
  - { from: ship, to: failed, label: rejected }
`;

describe("clustercode status (local)", () => {
  it("shows a run waiting at an approval as awaiting input, and which approval", async () => {
    const { repo, state, root } = makeRepo();
    writeFileSync(join(root, "gated.yml"), GATED);
    const env = cliEnv();
    const run = await runCli(
      ["run", join(root, "gated.yml"), "--repo", repo, "--state-dir", state, "--format", "json"],
      { cwd: repo, env },
    );
    expect(run.code, run.stderr).toBe(3);
    const { run: runId, branch } = summaryOf(run);
    const status = await runCli(["status", runId, "--state-dir", state], { cwd: repo, env });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toBe(
      `${runId}  awaiting_input  ${branch}  (waiting for approval of ship)\n` +
        `  build                attempt 1  succeeded\n` +
        `  ship                 attempt 1  awaiting approval\n`,
    );
    const list = await runCli(["status", "--repo", repo, "--state-dir", state], {
      cwd: repo,
      env,
    });
    expect(list.stdout).toBe(
      `${runId}  awaiting_input  ${branch}  (waiting for approval of ship)\n`,
    );
  }, 60_000);
});
