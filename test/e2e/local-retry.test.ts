import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { graphVersion } from "../../src/workflow/graph-version.js";
import { cliEnv, makeRepo, runCli, summaryOf } from "./local-cli.js";

/** A loop whose gate never passes: it is exhausted after two iterations and the run fails. */
const LOOP = `version: 1
name: fixer
on: { label: go }
engines:
  noop: { command: [test, -f, "{prompt_file}"] }
nodes:
  fix:
    kind: loop
    goal: Make the tests pass.
    agent: { engine: noop }
    gates: [{ name: tests, run: "false" }]
    budget: { max_iterations: 2 }
`;

describe("clustercode retry (local)", () => {
  it("does not run an exhausted loop again without --reset-budget", async () => {
    const { repo, state, root } = makeRepo();
    writeFileSync(join(root, "fixer.yml"), LOOP);
    const env = cliEnv();
    const common = ["--state-dir", state, "--format", "json"];
    const run = await runCli(["run", join(root, "fixer.yml"), "--repo", repo, ...common], {
      cwd: repo,
      env,
    });
    expect(run.code, run.stderr).toBe(1);
    const { run: runId } = summaryOf(run);

    const refused = await runCli(["retry", runId, ...common], { cwd: repo, env });
    expect(refused.code).toBe(4);
    expect(refused.stderr).toBe(
      `clustercode retry: run ${runId}: loop fix used all 2 iterations; retry with --reset-budget to give it a fresh budget\n`,
    );

    // The workflow changes before the retry: the run goes on with the version it pinned, and says so.
    const changed = `${LOOP}# edited after the run started\n`;
    writeFileSync(join(root, "fixer.yml"), changed);
    const reset = await runCli(["retry", runId, "--reset-budget", "--as", "ops", ...common], {
      cwd: repo,
      env,
    });
    expect(reset.code, reset.stderr).toBe(1);
    expect(reset.stderr).toContain(
      `run ${runId} goes on with the workflow version it started with (${graphVersion(LOOP).slice(0, 12)}); ../fixer.yml is now ${graphVersion(changed).slice(0, 12)}, which it does not run`,
    );
    expect(summaryOf(reset).visits.map((v) => `${v.node}#${v.attempt}:${v.outcome}`)).toEqual([
      "fix#1:exhausted",
      "fix#2:exhausted",
    ]);
    const log = await runCli(["log", runId, "--state-dir", state, "--format", "json"], {
      cwd: repo,
      env,
    });
    expect(log.stdout).toContain('"kind":"budget.reset"');
    expect(log.stdout).toContain('"actor":"ops"');
    expect(log.stdout).toContain(`"graphVersion":"${graphVersion(LOOP)}"`);
    expect(log.stdout).toContain(`"workflowChangedTo":"${graphVersion(changed)}"`);
  }, 60_000);
});
