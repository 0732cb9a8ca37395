import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cliEnv, makeRepo, runCli, summaryOf } from "./local-cli.js";

/**
 * `work` reports what it was told; `check` fails the first time with a reason, sending the run
 * back to `work` over the back-edge, and passes the second time.
 */
const WORKFLOW = `version: 1
name: told
on: { label: go }
nodes:
  work:
    kind: run
    run: 'if [ -n "\${CLUSTERCODE_FEEDBACK_FILE:-}" ]; then echo "TOLD:"; cat "$CLUSTERCODE_FEEDBACK_FILE"; else echo "FIRST VISIT"; fi'
  check:
    kind: decision
    evaluator: deterministic
    run: 'if [ -f checked ]; then exit 0; fi; touch checked; echo "the greeting is missing"; exit 3'
edges:
  - { from: work, to: check }
  - { from: check, to: done, label: pass }
  - { from: check, to: work, label: fail, back: true, max_traversals: 1 }
  - { from: check, to: escalated, label: exhausted }
`;

describe("feedback on re-entry (local)", () => {
  it("hands the command entered again by a back-edge the decision's command, exit code and output", async () => {
    const { repo, state, root } = makeRepo();
    writeFileSync(join(root, "told.yml"), WORKFLOW);
    const env = cliEnv();
    const common = ["--state-dir", state, "--format", "json"];
    const run = await runCli(["run", join(root, "told.yml"), "--repo", repo, ...common], {
      cwd: repo,
      env,
    });
    expect(run.code, run.stderr).toBe(0);
    const summary = summaryOf(run);
    expect(summary.visits.map((v) => `${v.node}:${v.outcome}`)).toEqual([
      "work:succeeded",
      "check:fail",
      "work:succeeded",
      "check:pass",
    ]);
    const log = await runCli(["log", summary.run, ...common], { cwd: repo, env });
    const outputs = log.stdout
      .split("\n")
      .filter(
        (line) => line.includes('"kind":"command.finished"') && line.includes('"node":"work"'),
      )
      .map((line) => (JSON.parse(line) as { output: string }).output)
      // Checkpoints are commands of the node too: keep the node's own script's output.
      .filter((output) => output.includes("FIRST VISIT") || output.includes("TOLD:"));
    expect(outputs).toHaveLength(2);
    expect(outputs[0]).toContain("FIRST VISIT");
    const told = outputs[1] ?? "";
    expect(told).toContain("TOLD:");
    expect(told).toContain("deterministic [fail]: check: `if [ -f checked ]");
    expect(told).toContain("exited 3");
    expect(told).toContain("the greeting is missing");
    expect(log.stdout).toContain('"kind":"feedback.given"');
  }, 60_000);

  it("hands a node's typed outputs to the next node through the local DevBox", async () => {
    const { repo, state, root } = makeRepo();
    writeFileSync(
      join(root, "outputs.yml"),
      `version: 1
name: outputs
on: { label: go }
nodes:
  build:
    kind: run
    run: 'echo "version=1.2.3" >> "$CLUSTERCODE_OUTPUT_FILE"; echo "ready=true" >> "$CLUSTERCODE_OUTPUT_FILE"'
    outputs:
      version: { type: string }
      ready: { type: boolean }
  ship:
    kind: run
    run: 'echo "STATE:"; cat "$CLUSTERCODE_OUTPUTS_FILE"'
    inputs: [version]
edges:
  - { from: build, to: ship }
`,
    );
    const env = cliEnv();
    const common = ["--state-dir", state, "--format", "json"];
    const run = await runCli(["run", join(root, "outputs.yml"), "--repo", repo, ...common], {
      cwd: repo,
      env,
    });
    expect(run.code, run.stderr).toBe(0);
    const log = await runCli(["log", summaryOf(run).run, ...common], { cwd: repo, env });
    const shipOutput = log.stdout
      .split("\n")
      .filter((line) => line.includes('"kind":"command.finished"'))
      .map((line) => (JSON.parse(line) as { output: string }).output)
      .find((output) => output.includes("STATE:"));
    expect(shipOutput).toContain('{"version":"1.2.3","ready":true}');
    expect(log.stdout).toContain('"kind":"outputs.recorded"');
  }, 60_000);

  it("keeps files written under CLUSTERCODE_SCRATCH off the run branch, for later nodes of the DevBox", async () => {
    const { repo, state, root } = makeRepo();
    writeFileSync(
      join(root, "scratch.yml"),
      `version: 1
name: scratch
on: { label: go }
nodes:
  plan:
    kind: run
    run: 'test -n "\${CLUSTERCODE_SCRATCH:-}"; echo "plan: greet" > "$CLUSTERCODE_SCRATCH/notes.md"; echo "code" > work.txt'
  build:
    kind: run
    run: 'echo "NOTES:"; cat "$CLUSTERCODE_SCRATCH/notes.md"'
edges:
  - { from: plan, to: build }
`,
    );
    const env = cliEnv();
    const common = ["--state-dir", state, "--format", "json"];
    const run = await runCli(["run", join(root, "scratch.yml"), "--repo", repo, ...common], {
      cwd: repo,
      env,
    });
    expect(run.code, run.stderr).toBe(0);
    const { branch, run: runId } = summaryOf(run);
    const files = execFileSync("git", ["ls-tree", "-r", "--name-only", branch], {
      cwd: repo,
      encoding: "utf8",
    });
    expect(files.split("\n")).toContain("work.txt");
    expect(files).not.toContain("notes.md");
    const log = await runCli(["log", runId, ...common], { cwd: repo, env });
    expect(log.stdout).toContain("NOTES:\\nplan: greet");
  }, 60_000);
});
