import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cliEnv, makeRepo, runCli, summaryOf } from "./local-cli.js";

/** An agent writes, an agent judge says whether it may go on, then a person approves. */
const WORKFLOW = `version: 1
name: judged
on: { label: go }
engines:
  writer: { command: [bash, -c, 'echo work >> WORK.md', writer, "{prompt_file}"] }
nodes:
  write:
    kind: run
    agent: { engine: writer }
    prompt: Write WORK.md.
  check:
    kind: decision
    evaluator: agent
    question: Is WORK.md ready to ship?
    judge: { provider: anthropic, model: claude-judge-1 }
  ship:
    kind: approval
edges:
  - { from: write, to: check }
  - { from: check, to: ship, label: "yes" }
  - { from: check, to: failed, label: "no" }
  - { from: ship, to: done, label: approved }
  - { from: ship, to: failed, label: rejected }
`;

/** The judge (CLUSTERCODE_JUDGE_COMMAND): always says yes, and names the model it stands for. */
const JUDGE = `process.stdin.resume();
process.stdin.on("end", () =>
  console.log(JSON.stringify({ label: "yes", reasoning: "ready", model: "house-judge-1" })),
);
`;

interface Scorecard {
  runs: number;
  judges: {
    provider: string;
    model: string;
    verdicts: number;
    overturned: number;
    overturnRate: number;
    independentShare: number;
  }[];
  verdicts: { runId: string; overturned?: { why: string } }[];
}

describe("clustercode scorecard", () => {
  it("counts a verdict a person then rejected as overturned, credited to the judge that gave it", async () => {
    const { repo, state, root } = makeRepo({ "workflow.yml": WORKFLOW });
    writeFileSync(join(root, "judge.mjs"), JUDGE);
    const env = cliEnv({
      CLUSTERCODE_JUDGE_COMMAND: JSON.stringify(["node", join(root, "judge.mjs")]),
    });
    const common = ["--state-dir", state, "--format", "json"];
    const runs: string[] = [];
    for (let i = 0; i < 2; i++) {
      const started = await runCli(["run", "workflow.yml", ...common], { cwd: repo, env });
      expect(started.code, started.stderr).toBe(3);
      runs.push(summaryOf(started).run);
    }
    // One verdict is contradicted by a person at the next approval; the other is borne out.
    const rejected = await runCli(["reject", runs[0] ?? "", "--as", "carol", ...common], {
      cwd: repo,
      env,
    });
    expect(rejected.code).toBe(1);
    const approved = await runCli(["approve", runs[1] ?? "", ...common], { cwd: repo, env });
    expect(approved.code).toBe(0);

    const shown = await runCli(["scorecard", ...common], { cwd: repo, env });
    expect(shown.code, shown.stderr).toBe(0);
    const card = JSON.parse(shown.stdout) as Scorecard;
    expect(card.runs).toBe(2);
    expect(card.judges).toEqual([
      {
        // The judge command gave the verdicts, not the workflow's declared anthropic model.
        provider: "command",
        model: "house-judge-1",
        verdicts: 2,
        overturned: 1,
        overturnRate: 0.5,
        // The work was written by another engine than the judge's provider.
        independentShare: 1,
      },
    ]);
    const overturned = card.verdicts.filter((v) => v.overturned !== undefined);
    expect(overturned.map((v) => [v.runId, v.overturned?.why])).toEqual([
      [runs[0], "rejected at ship by carol"],
    ]);

    const human = await runCli(["scorecard", "--state-dir", state, "--since", "1d"], {
      cwd: repo,
      env,
    });
    expect(human.stdout).toMatch(/command\s+house-judge-1\s+2\s+1\s+50 %\s+100 %/);
    const none = await runCli(["scorecard", "--state-dir", state, "--since", "2999-01-01"], {
      cwd: repo,
      env,
    });
    expect(none.stdout).toBe("no judge verdicts in these runs\n");
  }, 120_000);
});
