import { spawn, spawnSync } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { commandSandbox } from "../../src/devbox/agent/command-sandbox.js";

/**
 * The ECS image's agent runs as root and each command as an unprivileged user through setpriv
 * (`CLUSTERCODE_COMMAND_SANDBOX=setpriv:<user>`, set by its entrypoint). Tried here as root (as
 * CI runs) with Debian's `daemon` user: an injected command reads the agent's /proc entries only when
 * it is not dropped.
 */
const root = process.getuid?.() === 0;
const agent = spawn("sleep", ["60"], { env: { CLUSTERCODE_DEVBOX_TOKEN: "agent-canary-token" } });
afterAll(() => agent.kill());

function asCommand(kind: string | undefined, file: string, args: string[]) {
  const sandbox = commandSandbox(kind);
  if (sandbox instanceof Error) throw sandbox;
  const wrapped = sandbox?.(file, args) ?? { file, args };
  return spawnSync(wrapped.file, wrapped.args, { encoding: "utf8" });
}

describe.skipIf(!root)("the ECS DevBox's privilege drop, run locally as root", () => {
  it("keeps a command from reading the agent's environment, token included", () => {
    const environ = `/proc/${agent.pid}/environ`;
    // Without the drop, a command reads the token: the attack this wall stops.
    expect(asCommand(undefined, "cat", [environ]).stdout).toContain("agent-canary-token");
    const dropped = asCommand("setpriv:daemon", "cat", [environ]);
    expect(dropped.status).not.toBe(0);
    expect(dropped.stdout).not.toContain("agent-canary-token");
    expect(dropped.stderr).toMatch(/Permission denied/);
  });

  it("runs the command with no capabilities and no way to gain any", () => {
    const status = asCommand("setpriv:daemon", "cat", ["/proc/self/status"]).stdout;
    expect(status).toMatch(/^CapEff:\s+0+$/m);
    expect(status).toMatch(/^CapBnd:\s+0+$/m);
    expect(status).toMatch(/^NoNewPrivs:\s+1$/m);
    expect(status).not.toMatch(/^Uid:\s+0\b/m);
  });
});
