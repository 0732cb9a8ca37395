import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cliEnv, makeRepo, runCli, summaryOf } from "./local-cli.js";

/** What the run branch holds at `path`, read from the repository the DevBoxes push to. */
function onBranch(repo: string, branch: string, path: string): string {
  return execFileSync("git", ["show", `${branch}:${path}`], { cwd: repo, encoding: "utf8" });
}

function commitSubject(repo: string, branch: string): string {
  return execFileSync("git", ["log", "-1", "--format=%s", branch], {
    cwd: repo,
    encoding: "utf8",
  }).trim();
}

async function runWorkflow(yaml: string, files: Record<string, string> = {}) {
  const { repo, state, root } = makeRepo(files);
  writeFileSync(join(root, "flow.yml"), yaml);
  const result = await runCli(
    ["run", join(root, "flow.yml"), "--repo", repo, "--state-dir", state, "--format", "json"],
    { cwd: repo, env: cliEnv() },
  );
  return { repo, result, summary: summaryOf(result) };
}

describe("a stopped node's partial work is on the run branch", () => {
  it("after its timeout: the running command is interrupted and the work checkpointed", async () => {
    const { repo, result, summary } = await runWorkflow(`version: 1
name: slow
on: { label: go }
nodes:
  # The run's DevBox is claimed and ready before \`work\`'s clock starts, however slow the
  # machine: the timeout stops a running command, not a clone.
  prepare:
    kind: run
    run: "true"
  work:
    kind: run
    run: "echo half done > partial.txt && sleep 60 && echo done > partial.txt"
    timeout: 3s
edges:
  - { from: prepare, to: work }
`);
    expect(result.code, result.stderr).toBe(1);
    expect(summary.visits.map((v) => `${v.node}:${v.outcome}`)).toEqual([
      "prepare:succeeded",
      "work:timed_out",
    ]);
    expect(onBranch(repo, summary.branch, "partial.txt")).toBe("half done\n");
    expect(commitSubject(repo, summary.branch)).toBe("clustercode: checkpoint work (timed out)");
  }, 60_000);

  it("after the run's budget stops it: the turn that crossed it is checkpointed", async () => {
    const agent = `import { writeFileSync } from "node:fs";
writeFileSync("draft.txt", "a costly draft\\n");
console.log(JSON.stringify({ cost_usd: 3 }));
`;
    const { repo, result, summary } = await runWorkflow(
      `version: 1
name: costly
on: { label: go }
budget: { max_cost_usd: 2 }
engines:
  pricey: { command: [node, agent.mjs, "{prompt_file}"], cost: { json_path: cost_usd } }
nodes:
  write:
    kind: run
    agent: { engine: pricey }
    prompt: Write a draft.
`,
      { "agent.mjs": agent },
    );
    expect(result.code, result.stderr).toBe(1);
    expect(summary.status).toBe("failed");
    expect(onBranch(repo, summary.branch, "draft.txt")).toBe("a costly draft\n");
    expect(commitSubject(repo, summary.branch)).toBe(
      "clustercode: checkpoint write (run budget exceeded)",
    );
  }, 60_000);
});
