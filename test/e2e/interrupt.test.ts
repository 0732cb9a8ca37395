import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { waitForExit } from "../../src/devbox/local/process-info.js";
import { cliEnv, makeRepo, runCli, startCli } from "./local-cli.js";

/** Bounded wait for a condition the test cannot be told about. */
async function until(test: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 600 && !test(); i++) await new Promise((r) => setTimeout(r, 100));
  if (!test()) throw new Error(`never saw ${what}`);
}

function readOr(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}

describe("Ctrl-C during clustercode run", () => {
  it("stops the DevBox, leaves the run interrupted in status, and resume finishes it", async () => {
    const { repo, state, root } = makeRepo();
    // The command notes its pid, then waits for the gate file.
    writeFileSync(
      join(root, "wf.yml"),
      `version: 1
name: slow
on: { label: x }
devbox: { secrets: [GATE, PIDS] }
nodes:
  work:
    kind: run
    run: 'echo $$ >> "$PIDS"; while [ ! -f "$GATE" ]; do sleep 0.1; done; echo passed > passed.txt'
`,
    );
    const pids = join(root, "pids");
    const env = cliEnv({ GATE: join(root, "gate"), PIDS: pids });
    const child = startCli(["run", join(root, "wf.yml"), "--repo", repo, "--state-dir", state], {
      cwd: repo,
      env,
    });
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
    await until(() => readOr(pids).trim() !== "", "the command start");
    const commandPid = Number(readOr(pids).trim());

    child.kill("SIGINT");
    expect(await exited).toBe(130);
    // The DevBox's command went with it (only its reaping may still be under way).
    expect(await waitForExit(commandPid, 5000)).toBe(true);
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

    writeFileSync(join(root, "gate"), "");
    const resumed = await runCli(["resume", runId, "--state-dir", state], { cwd: repo, env });
    expect(resumed.stdout).toContain(`run ${runId}: succeeded`);
    expect(resumed.code).toBe(0);
    const branch = `clustercode/local-${runId}`;
    const passed = execFileSync("git", ["-C", repo, "show", `${branch}:passed.txt`], {
      encoding: "utf8",
    });
    expect(passed).toBe("passed\n");
  }, 90_000);
});
