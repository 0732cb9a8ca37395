import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";

const ROOT = new URL("../../", import.meta.url).pathname;

/** The part of madge's API this test uses (madge ships no types). */
type Madge = (
  path: string,
  config: { baseDir: string; fileExtensions: string[]; tsConfig: string },
) => Promise<{ circular(): string[][] }>;

describe("the import graph of src/", () => {
  it("has no cycle, type-only imports counted", { timeout: 120_000 }, async () => {
    const madge = createRequire(import.meta.url)("madge") as Madge;
    const graph = await madge(`${ROOT}src`, {
      baseDir: ROOT,
      fileExtensions: ["ts"],
      tsConfig: `${ROOT}tsconfig.json`,
    });
    expect(graph.circular()).toEqual([]);
  });
});
