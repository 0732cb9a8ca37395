import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
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

    const reset = await runCli(["retry", runId, "--reset-budget", "--as", "ops", ...common], {
      cwd: repo,
      env,
    });
    expect(reset.code, reset.stderr).toBe(1);
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
  }, 60_000);
});
