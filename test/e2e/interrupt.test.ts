import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { waitForExit } from "../../src/devbox/local/process-info.js";
import { cliEnv, makeRepo, runCli, startCli, writeDevBoxFile } from "./local-cli.js";

/** Bounded wait for a condition the test cannot be told about. */
async function until(test: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 600 && !test(); i++) await new Promise((r) => setTimeout(r, 100));
  if (!test()) throw new Error(`never saw ${what}`);
}

/**
 * The host pids of the processes whose command line holds `marker`. The command runs in the
 * DevBox's own PID namespace, so the pid it would print is not the host's: the test finds it.
 */
function pidsWith(marker: string): number[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(marker);
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe("Ctrl-C during clustercode run", () => {
  it("stops the DevBox, leaves the run interrupted in status, and resume finishes it", async () => {
    const { repo, state, root } = makeRepo();
    // The command carries a marker to be found by, then waits for its gate (a file in its
    // checkout's .git, which both the sandboxed DevBox and the test see).
    const marker = `interrupt-${process.pid}-${Date.now()}`;
    writeFileSync(
      join(root, "wf.yml"),
      `version: 1
name: slow
on: { label: x }
nodes:
  work:
    kind: run
    run: ': ${marker}; while [ ! -f .git/gate ]; do sleep 0.1; done; echo passed > passed.txt'
`,
    );
    const env = cliEnv();
    const child = startCli(["run", join(root, "wf.yml"), "--repo", repo, "--state-dir", state], {
      cwd: repo,
      env,
    });
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
    // The shell that runs the command, as the host sees it (not bwrap's, whose argv holds it too).
    const shells = () =>
      pidsWith(marker).filter(
        (pid) => !readFileSync(`/proc/${pid}/cmdline`, "utf8").startsWith("bwrap"),
      );
    await until(() => shells().length > 0, "the command start");
    const commandPids = pidsWith(marker);

    child.kill("SIGINT");
    expect(await exited).toBe(130);
    // The DevBox's command went with it (only its reaping may still be under way).
    for (const pid of commandPids) expect(await waitForExit(pid, 5000)).toBe(true);
    const runId = /run (r\w+) of slow/.exec(stdout)?.[1] ?? "";
    expect(stderr).toContain(`run ${runId}: interrupted`);
    expect(stderr).toContain(`clustercode resume ${runId}`);

    const status = await runCli(["status", runId, "--state-dir", state], { cwd: repo, env });
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(new RegExp(`^${runId} +slow +interrupted`));
    expect(status.stdout).toContain(`clustercode resume ${runId}`);
    const json = await runCli(["status", runId, "--state-dir", state, "--format", "json"], {
      cwd: repo,
      env,
    });
    expect(JSON.parse(json.stdout)).toMatchObject({ run: runId, status: "interrupted" });

    // The resumed run's command is a new DevBox's: its gate opens as soon as it is there.
    const opener = setInterval(() => writeDevBoxFile(state, "gate"), 100);
    const resumed = await runCli(["resume", runId, "--state-dir", state], { cwd: repo, env });
    clearInterval(opener);
    expect(resumed.stdout).toContain(`run ${runId}: succeeded`);
    expect(resumed.code).toBe(0);
    const branch = `clustercode/local-${runId}`;
    const passed = execFileSync("git", ["-C", repo, "show", `${branch}:passed.txt`], {
      encoding: "utf8",
    });
    expect(passed).toBe("passed\n");
  }, 90_000);
});
