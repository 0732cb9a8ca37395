import { readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ruleMessages } from "../helpers/repository-lint.js";

const ROOT = new URL("../../", import.meta.url).pathname;

/** The layer rule's messages for `code` as the file `path` (from the repository root). */
const layerMessages = (path: string, code: string) => ruleMessages("layers/look-down", path, code);

describe("the lint rule for layers", () => {
  it("fails the engine importing the agents above it", async () => {
    const messages = await layerMessages(
      "src/engine/upward-fixture.ts",
      'import { resolveEngines } from "../agents/engines.js";\nexport const engines = resolveEngines;\n',
    );
    expect(messages).toEqual([
      "src/engine may not import src/agents (a higher layer): layers only look down (docs/architecture.md)",
    ]);
  });

  it("fails a type-only import up the layers, and a re-export", async () => {
    const messages = await layerMessages(
      "src/store/upward-fixture.ts",
      [
        'import type { Runtime } from "../runtime/runtime.js";',
        'export type { Surfaces } from "../github/surfaces/surfaces.js";',
        "export type Held = Runtime;",
      ].join("\n"),
    );
    expect(messages).toHaveLength(2);
    expect(messages[0]).toContain("src/store may not import src/runtime");
    expect(messages[1]).toContain("src/store may not import src/github");
  });

  it("fails an import of a folder beside it in the same layer", async () => {
    const messages = await layerMessages(
      "src/devbox/hub/sideways-fixture.ts",
      'export { cleanIssueText } from "../../agents/clean-text.js";\n',
    );
    expect(messages).toEqual([
      "src/devbox may not import src/agents (beside it in the same layer): layers only look down (docs/architecture.md)",
    ]);
  });

  it("passes imports down the layers and within a folder", async () => {
    const messages = await layerMessages(
      "src/github/handlers/downward-fixture.ts",
      [
        'import type { Runtime } from "../../runtime/runtime.js";',
        'import type { Store } from "../../store/store.js";',
        'import type { GitHub } from "../client/github.js";',
        "export type Parts = [Runtime, Store, GitHub];",
      ].join("\n"),
    );
    expect(messages).toEqual([]);
  });

  it("gives every folder of src/ a layer", async () => {
    const folders = readdirSync(`${ROOT}src`, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    const { LAYERS } = (await import(new URL("lint/layers.js", `file://${ROOT}`).href)) as {
      LAYERS: string[][];
    };
    expect(folders.filter((folder) => !LAYERS.flat().includes(folder))).toEqual([]);
  });
});
