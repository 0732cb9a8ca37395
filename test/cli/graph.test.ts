import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { LIFECYCLE, runCli, tempDir } from "./helpers.js";

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

describe("clustercode graph", () => {
  it("renders the lifecycle as a Mermaid flowchart", async () => {
    const result = await runCli(["graph", LIFECYCLE]);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe("");
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines[0]).toBe("flowchart TD");
    expect(lines[1]).toBe("  start(( )) --> n0");

    // Node kinds are visible in shape and caption.
    expect(lines).toContain('  n0["requirements<br/><small>run · claude</small>"]');
    expect(lines).toContain(
      '  n1[["design<br/><small>prototype · 2 variants · select judge</small>"]]',
    );
    expect(lines).toContain('  n2(["implement<br/><small>loop · claude · ≤8 iterations</small>"])');
    expect(lines).toContain('  n3["test<br/><small>run · command</small>"]');
    expect(lines).toContain('  n4{"test-result<br/><small>decision · status</small>"}');
    expect(lines).toContain('  n6{{"deploy-approval<br/><small>approval</small>"}}');
    expect(lines).toContain('  n9{"incident<br/><small>decision · deterministic</small>"}');

    // Labels on edges; forward edges solid, unlabelled ones bare.
    expect(lines).toContain("  n0 --> n1");
    expect(lines).toContain('  n4 -->|"succeeded"| n5');
    expect(lines).toContain('  n6 -->|"rejected"| t_failed');

    // Back-edges dashed, with their caps.
    const dashed = lines.filter((line) => line.includes("-.->"));
    expect(dashed).toEqual([
      '  n4 -.->|"failed ≤3×"| n2',
      '  n5 -.->|"needs-changes ≤2×"| n2',
      '  n9 -.->|"pass ≤3×"| n0',
    ]);

    // Terminals drawn and styled.
    for (const terminal of ["done", "failed", "escalated"]) {
      expect(lines).toContain(`  t_${terminal}((${terminal}))`);
      expect(lines).toContain(`  class t_${terminal} ${terminal}`);
    }
    expect(lines.filter((line) => /^ {2}n\d+[[({]/.test(line))).toHaveLength(10);
  });

  it("draws only the terminals the workflow uses, and the default cap of a back-edge", async () => {
    const cwd = await tempDir({
      "flow.yml": `version: 1
name: t
on: { label: go }
nodes:
  build: { kind: run, run: make, title: 'Build "all"' }
  check: { kind: run, run: make check }
edges:
  - { from: build, to: check }
  - { from: check, to: build, back: true }
  - { from: check, to: escalated, label: exhausted }
`,
    });
    dirs.push(cwd);
    const result = await runCli(["graph", "flow.yml"], { cwd });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('  n0["Build #quot;all#quot;<br/>');
    expect(result.stdout).toContain('  n1 -.->|"≤3×"| n0');
    expect(result.stdout).toContain("t_escalated((escalated))");
    expect(result.stdout).not.toContain("t_done");
    expect(result.stdout).not.toContain("t_failed");
  });

  it("exits 1 on an invalid workflow, with the findings on stderr and nothing on stdout", async () => {
    const cwd = await tempDir({
      "flow.yml": "version: 1\nname: t\non: { label: go }\nnodes:\n  a: { kind: run }\n",
    });
    dirs.push(cwd);
    const result = await runCli(["graph", "flow.yml"], { cwd });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toBe(
      [
        "flow.yml:5:6  error  a run node needs run (a command) or agent and prompt  [schema]",
        "  4 | nodes:",
        "> 5 |   a: { kind: run }",
        "    |      ^",
        "",
        "",
      ].join("\n"),
    );
  });

  it("without an argument, draws the workflow run would take, from any subdirectory", async () => {
    const cwd = await tempDir({
      ".git/HEAD": "ref: refs/heads/main\n",
      ".clustercode/workflow.yml": await readFile(LIFECYCLE, "utf8"),
      "src/.keep": "",
    });
    dirs.push(cwd);
    const result = await runCli(["graph"], { cwd: join(cwd, "src") });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toBe((await runCli(["graph", LIFECYCLE])).stdout);
  });

  it("exits 2 without a file or with an unreadable one", async () => {
    const none = await runCli(["graph"]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^clustercode graph: no workflow found: pass a file/);

    const missing = await runCli(["graph", "nope.yml"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe(
      "clustercode graph: cannot read nope.yml: no such file or directory\n",
    );
  });
});
