import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";

const ENTRYPOINT = new URL("../../images/devbox/entrypoint.sh", import.meta.url).pathname;

/** Stand-ins for curl (the token route), git and the agent, each logging its arguments. */
function stubs(dir: string): void {
  const stub = (name: string, body: string) => {
    writeFileSync(join(dir, name), `#!/usr/bin/env bash\n${body}\n`);
    chmodSync(join(dir, name), 0o755);
  };
  stub("curl", `echo '{"token":"ghs_fresh","expiresAt":"2030-01-01T00:00:00Z"}'`);
  stub(
    "git",
    `echo "git $* header=\${GIT_CONFIG_VALUE_0:-none}" >> "$STUB_LOG"; if [[ $1 == clone ]]; then mkdir -p "\${@: -1}"; fi`,
  );
  stub(
    "clustercode",
    `echo "clustercode $* stdin=$(cat) env=\${CLUSTERCODE_DEVBOX_TOKEN:-unset}" >> "$STUB_LOG"`,
  );
}

/** Runs the entrypoint in its own process group, which is ended afterwards (its refresh loop). */
function runEntrypoint(home: string, bin: string, repository: string): Promise<number | null> {
  const child = spawn("bash", [ENTRYPOINT], {
    detached: true,
    stdio: "ignore",
    env: {
      PATH: `${bin}:${process.env.PATH ?? ""}`,
      HOME: home,
      STUB_LOG: join(home, "log"),
      CLUSTERCODE_API_URL: "http://127.0.0.1:9/",
      CLUSTERCODE_DEVBOX_ID: "r1:d1",
      CLUSTERCODE_DEVBOX_TOKEN: "hub-token",
      CLUSTERCODE_REPOSITORY: repository,
    },
  });
  return new Promise((resolve) =>
    child.on("exit", (code) => {
      if (child.pid !== undefined) {
        try {
          process.kill(-child.pid, "SIGTERM");
        } catch {
          // The group is gone already.
        }
      }
      resolve(code);
    }),
  );
}

describe("the DevBox entrypoint", () => {
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  it("clones through the hub with the DevBox's token in git's environment only, and hands the agent its token on stdin", async () => {
    const home = mkdtempSync(join(tmpdir(), "cc-entry-"));
    const bin = mkdtempSync(join(tmpdir(), "cc-entry-bin-"));
    dirs.push(home, bin);
    stubs(bin);
    const repository = "http://10.0.0.5:8080/internal/devboxes/r1%3Ad1/git/acme/app.git";
    expect(await runEntrypoint(home, bin, repository)).toBe(0);
    // No credential is written anywhere a command could read it.
    expect(existsSync(join(home, ".git-credentials"))).toBe(false);
    const log = readFileSync(join(home, "log"), "utf8");
    expect(log).toContain(
      `git clone --quiet -- ${repository} ${join(home, "workspace")} header=Authorization: Bearer hub-token`,
    );
    expect(log).toContain(
      "clustercode devbox --api http://127.0.0.1:9/ --devbox r1:d1 --token-stdin stdin=hub-token env=unset",
    );
  });
});
