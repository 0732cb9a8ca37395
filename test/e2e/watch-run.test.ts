import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cliEnv, makeRepo, runCli, startCli, watch, writeDevBoxFile } from "./local-cli.js";

/**
 * A command that prints a line, then waits for the test to open its gate: a file in its
 * checkout's .git, the one place both the sandboxed DevBox and the test see.
 */
const workflow = `version: 1
name: watch
on: { label: x }
nodes:
  work:
    kind: run
    run: 'echo before-the-gate; while [ ! -f .git/gate ]; do sleep 0.1; done; echo after-the-gate'
`;

describe("watching a local run", () => {
  it("answers status, log --follow and a second run while a run goes", async () => {
    const { repo, state, root } = makeRepo();
    writeFileSync(join(root, "wf.yml"), workflow);
    const env = cliEnv();
    const runChild = startCli(["run", join(root, "wf.yml"), "--repo", repo, "--state-dir", state], {
      cwd: repo,
      env,
    });
    const run = watch(runChild);
    await run.until((out) => /run (r\w+) of watch/.test(out.stdout), "the run's id");
    const runId = /run (r\w+) of watch/.exec(run.seen.stdout)?.[1] ?? "";
    const follow = watch(
      startCli(["log", "--follow", runId, "--state-dir", state], { cwd: repo, env }),
    );
    // The command's first line shows while the command still waits on the gate.
    await follow.until((out) => out.stdout.includes("│ before-the-gate"), "live output");
    expect(follow.seen.stdout).not.toContain("after-the-gate");

    const status = await runCli(["status", runId, "--state-dir", state], { cwd: repo, env });
    expect(status.stderr).toBe("");
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(new RegExp(`^${runId} +watch +running`));

    // Another run of the same state directory goes at the same time.
    const second = watch(
      startCli(["run", join(root, "wf.yml"), "--repo", repo, "--state-dir", state], {
        cwd: repo,
        env,
      }),
    );
    await second.until((out) => out.stdout.includes("[work] before-the-gate"), "a second run");

    writeDevBoxFile(state, "gate");
    expect(await run.exited).toBe(0);
    expect(await second.exited).toBe(0);
    expect(await follow.exited).toBe(0);
    const lines = follow.seen.stdout.split("\n");
    const after = lines.findIndex((line) => line.includes("│ after-the-gate"));
    const done = lines.findIndex((line) => line.includes("● run succeeded"));
    expect(after).toBeGreaterThan(-1);
    expect(done).toBeGreaterThan(after);
  }, 90_000);

  it("shows a failed command's text and the end of its output in run and in log", async () => {
    const { repo, state, root } = makeRepo();
    writeFileSync(
      join(root, "wf.yml"),
      `version: 1\nname: fails\non: { label: x }\nnodes:\n  check:\n    kind: run\n    run: |\n      echo checking the widgets\n      echo widget 3 is broken >&2\n      exit 7\n`,
    );
    const run = await runCli(["run", join(root, "wf.yml"), "--repo", repo, "--state-dir", state], {
      cwd: repo,
    });
    expect(run.code).toBe(1);
    const shown = [
      "    $ echo checking the widgets",
      "    $ echo widget 3 is broken >&2",
      "    $ exit 7",
      "    │ checking the widgets",
      "    │ widget 3 is broken",
    ];
    expect(run.stdout).toMatch(/✗ echo checking the widgets: exit 7/);
    expect(run.stdout).toContain(shown.join("\n"));
    const runId = /run (r\w+):/.exec(run.stdout)?.[1] ?? "";
    const log = await runCli(["log", runId, "--state-dir", state], { cwd: repo });
    expect(log.code).toBe(0);
    expect(log.stdout).toMatch(/✗ echo checking the widgets: exit 7/);
    for (const line of shown) expect(log.stdout).toContain(line);
  }, 90_000);
});
