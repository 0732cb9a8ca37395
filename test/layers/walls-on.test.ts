/**
 * One product under test: the suite runs DevBoxes as users run them, sandboxed. The few test
 * files that switch the walls off are listed here, each with its reason; a file that switches
 * them off without being listed, or a list that grows past five, fails.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");

/** The files that may run a DevBox without its walls, and why each must. */
const WALLS_OFF: Readonly<Record<string, string>> = {
  "test/devbox/local/devbox.test.ts":
    "watches the agent's and its commands' host pids, which the sandbox's PID namespace hides",
  "test/security/devbox-walls.test.ts":
    "proves the switch itself: a run without isolation says so in its evidence",
  "test/settings/decode.test.ts": "decodes the setting; starts no DevBox",
};

/** Switching the walls off: the variable set to "1", or the executor's `unsafe: true`. */
const SWITCH_OFF = /CLUSTERCODE_UNSAFE_LOCAL_DEVBOX["']?\s*[:=]\s*["']1["']|unsafe:\s*true/;

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "fixtures" ? [] : testFiles(path);
    return /\.(ts|js|mjs)$/.test(entry.name) ? [relative(ROOT, path)] : [];
  });
}

describe("the walls stay on in tests", () => {
  it("lets only the listed files, at most five, run a DevBox without its walls", () => {
    const off = testFiles(join(ROOT, "test"))
      .filter((file) => file !== "test/layers/walls-on.test.ts")
      .filter((file) => SWITCH_OFF.test(readFileSync(join(ROOT, file), "utf8")));
    expect(off.sort()).toEqual(Object.keys(WALLS_OFF).sort());
    expect(Object.keys(WALLS_OFF).length).toBeLessThanOrEqual(5);
  });

  it("notices a file that switches them off", () => {
    expect(SWITCH_OFF.test('env: { CLUSTERCODE_UNSAFE_LOCAL_DEVBOX: "1" }')).toBe(true);
    expect(SWITCH_OFF.test("CLUSTERCODE_UNSAFE_LOCAL_DEVBOX='1' clustercode run")).toBe(true);
    expect(SWITCH_OFF.test("new LocalExecutor({ sandbox: { unsafe: true } })")).toBe(true);
    expect(SWITCH_OFF.test("// the walls: see CLUSTERCODE_UNSAFE_LOCAL_DEVBOX")).toBe(false);
  });
});
