/**
 * An agent CLI a workflow's nodes start that is not installed on this host: `validate --strict`
 * names it and the PATH it looked in, and a local run (sandboxed, the product's defaults) fails
 * at the DevBox's claim with the same words, before any agent starts.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { makeRepo, runCli, summaryOf } from "../e2e/local-cli.js";

const WORKFLOW = `version: 1
name: ghost-agent
on: { label: go }
engines:
  ghost: { command: [no-such-agent-cli, "{prompt_file}"] }
  present: { command: [git, "{prompt_file}"] }
nodes:
  look: { kind: run, prompt: Look around., agent: { engine: present } }
  work: { kind: run, prompt: Do the work., agent: { engine: ghost } }
edges:
  - { from: look, to: work }
`;

const { repo, state, root } = makeRepo();
const empty = join(root, "empty-bin");
mkdirSync(empty);
// The host's PATH for the CLI: node's directory and the system's, and a directory without the CLI.
const PATH = `${empty}:${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`;
const env = { PATH, HOME: join(root, "home") };
const workflow = join(root, "workflow.yml");
writeFileSync(workflow, WORKFLOW);
afterAll(() => rm(root, { recursive: true, force: true }));

describe("an agent CLI that is not installed", () => {
  it("is an error of validate --strict at the node's engine, naming the command and the PATH searched", async () => {
    const result = await runCli(["validate", "--strict", workflow], { cwd: repo, env });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      `${workflow}:9:61  error  engine ghost: agent CLI "no-such-agent-cli" was not found on this host's PATH (searched PATH: ${PATH})`,
    );
    expect(result.stdout).toContain("[engine-command-missing]");
    // git is there: one finding, for the missing CLI only.
    expect(result.stdout.match(/engine-command-missing/g)).toHaveLength(1);
    expect(result.stderr).toBe("1 file checked: 1 error, 0 warnings\n");
  });

  it("is no error without --strict (the file itself is valid), nor once the CLI is on PATH", async () => {
    expect((await runCli(["validate", workflow], { cwd: repo, env })).code).toBe(0);
    writeFileSync(join(empty, "no-such-agent-cli"), "#!/bin/sh\nexit 0\n", { mode: 0o755 });
    try {
      const strict = await runCli(["validate", "--strict", workflow], { cwd: repo, env });
      expect(strict).toMatchObject({ code: 0, stdout: "" });
    } finally {
      await rm(join(empty, "no-such-agent-cli"));
    }
  });

  it("fails a local run at the DevBox's claim with that message, before any agent starts", async () => {
    const result = await runCli(
      ["run", workflow, "--repo", repo, "--brief", "Go.", "--state-dir", state, "--format", "json"],
      { cwd: repo, env, timeoutMs: 60_000 },
    );
    const summary = summaryOf(result);
    expect(summary.status).toBe("failed");
    expect(summary.visits.map((visit) => visit.node)).toEqual(["look"]);
    const log = await runCli(["log", summary.run, "--state-dir", state, "--format", "json"], {
      cwd: repo,
      env,
    });
    expect(log.stdout).toContain(
      `agent CLI \\"no-such-agent-cli\\" was not found on this host's PATH (searched PATH: ${PATH})`,
    );
    expect(log.stdout).not.toContain("execvp");
    expect(execFileSync("git", ["branch", "--list"], { cwd: repo, encoding: "utf8" })).toBe(
      "* main\n",
    );
  });
});
