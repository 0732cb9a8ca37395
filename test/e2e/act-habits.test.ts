import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { cliEnv, makeRepo, runCli } from "./local-cli.js";

const require = createRequire(import.meta.url);

const BUILD = `version: 1
name: build
on: { label: build-me, command: false }
nodes:
  compile: { kind: run, run: "echo compiled > compiled.txt" }
  test: { kind: run, run: "echo tested > tested.txt" }
  ship: { kind: approval, message: Ship it? }
edges:
  - { from: compile, to: test }
  - { from: test, to: ship }
  - { from: ship, to: done, label: approved }
  - { from: ship, to: failed, label: rejected }
`;
const DOCS = `version: 1
name: docs
on: { command: true }
nodes:
  write: { kind: run, run: "echo docs > docs.txt" }
`;

/** A repository with two workflows in .clustercode/workflows/ and no workflow.yml. */
function twoWorkflows() {
  const made = makeRepo();
  mkdirSync(join(made.repo, ".clustercode", "workflows"), { recursive: true });
  writeFileSync(join(made.repo, ".clustercode", "workflows", "build.yml"), BUILD);
  writeFileSync(join(made.repo, ".clustercode", "workflows", "docs.yml"), DOCS);
  execFileSync("git", ["add", "-A"], { cwd: made.repo });
  execFileSync("git", ["commit", "-qm", "workflows"], { cwd: made.repo });
  const cli = (args: string[]) =>
    runCli([...args, "--state-dir", made.state], { cwd: made.repo, env: cliEnv() });
  return { ...made, cli };
}

describe("act and gh habits", () => {
  it("lists the workflows; run without a name lists them; graph and --dry-run find one by name", async () => {
    const { repo } = twoWorkflows();
    const list = await runCli(["list"], { cwd: join(repo, ".clustercode"), env: cliEnv() });
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout.split("\n")).toEqual([
      "NAME   FILE                 TRIGGERS        NODES",
      "build  workflows/build.yml  label build-me  compile test ship",
      "docs   workflows/docs.yml   command         write",
      "",
    ]);
    const none = await runCli(["run"], { cwd: repo, env: cliEnv() });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("2 workflows and no .clustercode/workflow.yml: name one");
    expect(none.stderr).toContain("  build  .clustercode/workflows/build.yml");
    const graph = await runCli(["graph", "build"], { cwd: repo, env: cliEnv() });
    expect(graph.stdout).toContain("compile");
    const dry = await runCli(["run", "build", "--dry-run"], { cwd: repo, env: cliEnv() });
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toBe(
      [
        "dry run of build: the path when every node succeeds",
        "▶ compile (run)",
        "    $ echo compiled > compiled.txt",
        "  → test",
        "▶ test (run)",
        "    $ echo tested > tested.txt",
        "  → ship",
        "▶ ship (approval)",
        "    waits for approval: Ship it?",
        "  → done on approved",
        "● done",
        "",
      ].join("\n"),
    );
    const unknown = await runCli(["run", "build", "--only", "deploy"], {
      cwd: repo,
      env: cliEnv(),
    });
    expect(unknown.stderr).toBe(
      "clustercode run: --only deploy: build has no such node (its nodes: compile, test, ship)\n",
    );
  }, 60_000);

  it("runs one node with --only, starts at a node with --from, and prunes ended runs", async () => {
    const { repo, cli } = twoWorkflows();
    const only = await cli(["run", "build", "--only", "test", "--format", "json"]);
    expect(only.code, only.stderr).toBe(0);
    const onlyRun = JSON.parse(only.stdout.trim().split("\n").at(-1) ?? "") as {
      run: string;
      visits: { node: string }[];
    };
    expect(onlyRun.visits.map((visit) => visit.node)).toEqual(["test"]);
    const from = await cli(["run", "build", "--from", "test", "--format", "json"]);
    expect(from.code, from.stderr).toBe(3);
    const fromRun = JSON.parse(from.stdout.trim().split("\n").at(-1) ?? "") as {
      visits: { node: string }[];
    };
    expect(fromRun.visits.map((visit) => visit.node)).toEqual(["test", "ship"]);
    const branches = () =>
      execFileSync("git", ["branch", "--list", "clustercode/*"], { cwd: repo, encoding: "utf8" });
    expect(branches()).toContain(`clustercode/local-${onlyRun.run}`);
    const pruned = await cli(["prune"]);
    expect(pruned.code, pruned.stderr).toBe(0);
    // The ended run's branch goes; the run waiting on its approval keeps its own.
    expect(pruned.stdout).toBe("pruned 1 ended run: 1 branches, 1 DevBox checkouts\n");
    expect(branches()).not.toContain(`clustercode/local-${onlyRun.run}`);
    expect((await cli(["status", onlyRun.run])).stdout).toContain("succeeded");
  }, 120_000);

  it("takes the trigger and brief from a webhook payload with --event, as act -e", async () => {
    const { root, cli } = twoWorkflows();
    const examples = require("@octokit/webhooks-examples/api.github.com/index.json") as {
      name: string;
      examples: Record<string, unknown>[];
    }[];
    const labeled = examples
      .find((one) => one.name === "issues")
      ?.examples.find((one) => one.action === "labeled") as { issue: { title: string } };
    const payload = {
      ...labeled,
      label: { name: "build-me" },
      issue: { ...labeled.issue, title: "Build the thing", body: "Please build it." },
    };
    writeFileSync(join(root, "labeled.json"), JSON.stringify(payload));
    const dry = await cli(["run", "--event", join(root, "labeled.json"), "--dry-run"]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout.split("\n")[0]).toBe("dry run of build: the path when every node succeeds");
    const wrong = { ...payload, label: { name: "nothing-starts" } };
    writeFileSync(join(root, "wrong.json"), JSON.stringify(wrong));
    const none = await cli(["run", "--event", join(root, "wrong.json")]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("no valid workflow is started by label nothing-starts");
  }, 60_000);
});
