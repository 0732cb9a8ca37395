import { execFile } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LIFECYCLE, runCli, tempDir, type Exit } from "../cli/helpers.js";

const APP = join(import.meta.dirname, "../../dist/github/main.js");

/** Runs the built app in `cwd` with only `env` (and PATH): it must stop on its own. */
function runApp(cwd: string, env: Record<string, string>): Promise<Exit> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [APP],
      { cwd, env: { PATH: process.env.PATH ?? "", ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : -1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

describe("a bad setting at start", () => {
  it("stops the app before it opens anything, naming the variable", async () => {
    const cwd = await tempDir();
    const exit = await runApp(cwd, {
      APP_ID: "1",
      PRIVATE_KEY: "not used",
      CLUSTERCODE_STATE_DIR: join(cwd, "state"),
      CLUSTERCODE_ACK_DEADLINE_MS: "soon",
      PORT: "http",
    });
    expect(exit.code).toBe(1);
    expect(exit.stderr).toBe(
      [
        "clustercode app: invalid settings:",
        '  PORT must be a whole number from 1 to 65535, got "http"',
        '  CLUSTERCODE_ACK_DEADLINE_MS must be a positive whole number of milliseconds, got "soon"',
        "",
      ].join("\n"),
    );
    expect(existsSync(join(cwd, "state"))).toBe(false);
  });

  it("reads .env before deciding, as Probot does", async () => {
    const cwd = await tempDir({ ".env": "CLUSTERCODE_PR_READY=sometimes\n" });
    const exit = await runApp(cwd, { CLUSTERCODE_STATE_DIR: join(cwd, "state") });
    expect(exit.code).toBe(1);
    expect(exit.stderr).toMatch(/CLUSTERCODE_PR_READY must be one of `on-success`, `never`/);
  });

  it("stops a CLI command with a usage error before it starts a run", async () => {
    const cwd = await tempDir();
    const state = join(cwd, "state");
    const exit = await runCli(["run", LIFECYCLE, "--state-dir", state], {
      cwd,
      env: { CLUSTERCODE_DEVBOX_LAPSE_MS: "-1" },
    });
    expect(exit.code).toBe(2);
    expect(exit.stderr).toBe(
      'clustercode run: invalid settings:\n  CLUSTERCODE_DEVBOX_LAPSE_MS must be a positive whole number of milliseconds, got "-1"\n',
    );
    expect(existsSync(state) ? readdirSync(state) : []).toEqual([]);
  });
});
