/** `clustercode doctor` checks this machine's prerequisites and names the executor it will use. */
import { mkdir, symlink } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli, tempDir } from "./helpers.js";

/** The environment of a machine as the product sees it by default (no executor chosen). */
function defaults(env: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { CLUSTERCODE_EXECUTOR: "", ...env };
}

describe("clustercode doctor", () => {
  it("passes on this machine and names bubblewrap as the executor", async () => {
    const { code, stdout } = await runCli(["doctor"], { env: defaults() });
    expect(stdout).toMatch(/✓ Node\.js \d+/);
    expect(stdout).toMatch(/✓ git version/);
    expect(stdout).toMatch(/✓ bubblewrap: .*bwrap creates the DevBoxes' namespaces/);
    expect(stdout).toContain("DevBoxes here: local processes under bubblewrap.");
    expect(code).toBe(0);
  });

  it("fails without bubblewrap or an engine, and says what to install", async () => {
    // A PATH with git alone: no bwrap, no docker, no podman.
    const bin = join(await tempDir(), "bin");
    await mkdir(bin);
    await symlink("/usr/bin/git", join(bin, "git"));
    const env = defaults({ PATH: bin, CLUSTERCODE_BWRAP: join(bin, "no-such-bwrap") });
    const { code, stdout } = await runCli(["doctor"], { env });
    expect(stdout).toMatch(/✗ bubblewrap: .*bwrap was not found/);
    expect(stdout).toContain("apt-get install bubblewrap");
    expect(stdout).toMatch(
      /✗ container engine: docker not found on PATH; podman not found on PATH/,
    );
    expect(stdout).toMatch(
      /No usable executor: install bubblewrap .*CLUSTERCODE_EXECUTOR=container/,
    );
    expect(code).toBe(1);
  });
});
