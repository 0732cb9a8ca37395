import { describe, expect, it } from "vitest";
import { cliEnv, makeRepo, runCli, summaryOf } from "./local-cli.js";

describe("exit codes of the run commands", () => {
  it("cancel of a waiting run is 0; what follows an ended run is 'nothing to do' (4)", async () => {
    const { repo, state } = makeRepo();
    const env = cliEnv();
    const options = { cwd: repo, env };
    expect((await runCli(["init"], options)).code).toBe(0);
    const run = await runCli(["run", "--state-dir", state, "--format", "json"], options);
    expect(run.code, run.stderr).toBe(3);
    const { run: id } = summaryOf(run);
    const at = ["--state-dir", state];

    const cancel = await runCli(["cancel", id, ...at], options);
    expect(cancel.code, cancel.stderr).toBe(0);
    expect(cancel.stdout).toContain(`run ${id}: cancelled`);

    const after = {
      cancel: `clustercode cancel: run ${id}: the run has already ended (cancelled)\n`,
      approve: `clustercode approve: run ${id}: the run has already ended (cancelled)\n`,
      resume: `clustercode resume: run ${id} has already ended (cancelled): nothing to resume\n`,
    };
    for (const [command, message] of Object.entries(after)) {
      const result = await runCli([command, id, ...at], options);
      expect({ command, code: result.code, stderr: result.stderr }).toEqual({
        command,
        code: 4,
        stderr: message,
      });
    }
    const unknown = await runCli(["approve", "r-none", ...at], options);
    expect(unknown).toMatchObject({
      code: 4,
      stderr: `clustercode approve: no run r-none in ${state}\n`,
    });
  }, 120_000);
});
