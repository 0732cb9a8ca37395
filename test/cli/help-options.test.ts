import { describe, expect, it, vi } from "vitest";

/** The options each command declared, caught where it parses them. */
const declared = vi.hoisted(() => ({
  options: undefined as Record<string, { short?: string }> | undefined,
}));
class Parsed extends Error {}

vi.mock("../../src/cli/command.js", async (importOriginal) => {
  const original = await importOriginal<object>();
  return {
    ...original,
    parseOptions: (_args: string[], options: Record<string, { short?: string }>) => {
      declared.options = options;
      throw new Parsed();
    },
  };
});

const { COMMANDS } = await import("../../src/cli/command-table.js");
const { decodeSettings } = await import("../../src/settings/decode.js");

const io = {
  stdout: { write: () => true },
  stderr: { write: () => true },
  cwd: "/",
  env: {},
  settings: decodeSettings({}),
};

describe("clustercode --help", () => {
  it.each(Object.keys(COMMANDS))("%s --help lists every option it takes", async (name) => {
    const entry = COMMANDS[name];
    if (entry === undefined) throw new Error(name);
    declared.options = undefined;
    await expect((await entry.load())([], io)).rejects.toBeInstanceOf(Parsed);
    const options = (declared.options ?? {}) as Record<string, { short?: string }>;
    for (const [option, { short }] of Object.entries(options)) {
      expect(entry.help, `--${option}`).toMatch(new RegExp(`--${option}\\b`));
      if (short !== undefined) expect(entry.help, `-${short}`).toContain(`-${short}, --${option}`);
    }
  });
});
