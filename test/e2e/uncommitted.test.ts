import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { makeRepo, runCli } from "./local-cli.js";

describe("uncommitted changes", () => {
  const workflow = `version: 1
name: reads
on: { label: x }
nodes:
  read: { kind: run, run: 'cat notes.txt; grep -q edited README.md' }
`;

  function dirtyRepo() {
    const made = makeRepo();
    writeFileSync(join(made.root, "wf.yml"), workflow);
    writeFileSync(join(made.repo, "notes.txt"), "a new file\n");
    writeFileSync(join(made.repo, "README.md"), "# demo, edited\n");
    return made;
  }

  it("are left out with a warning that names them and the option", async () => {
    const { repo, state, root } = dirtyRepo();
    const run = await runCli(["run", join(root, "wf.yml"), "--repo", repo, "--state-dir", state], {
      cwd: repo,
    });
    expect(run.stderr).toContain(
      `clustercode run: warning: ${repo} has uncommitted changes (2 files: README.md, notes.txt)`,
    );
    expect(run.stderr).toContain("--include-uncommitted");
    expect(run.code).toBe(1);
  }, 90_000);

  it("are copied into the DevBox's clone with --include-uncommitted, leaving the user's tree as it was", async () => {
    const { repo, state, root } = dirtyRepo();
    const before = execFileSync("git", ["-C", repo, "status", "--porcelain"], { encoding: "utf8" });
    const run = await runCli(
      ["run", join(root, "wf.yml"), "--repo", repo, "--state-dir", state, "--include-uncommitted"],
      { cwd: repo },
    );
    expect(run.stderr).toMatch(/including uncommitted changes \(2 files\) as commit [0-9a-f]{12}/);
    expect(run.stdout).toMatch(/✓ cat notes\.txt; grep -q edited README\.md: exit 0/);
    expect(run.code).toBe(0);
    expect(execFileSync("git", ["-C", repo, "status", "--porcelain"], { encoding: "utf8" })).toBe(
      before,
    );
    expect(
      execFileSync("git", ["-C", repo, "rev-parse", "--abbrev-ref", "HEAD"], { encoding: "utf8" }),
    ).toBe("main\n");
  }, 90_000);
});
