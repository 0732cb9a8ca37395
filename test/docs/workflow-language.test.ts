import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { format, resolveConfig } from "prettier";
import { describe, expect, it } from "vitest";
import { renderFieldReference, withFieldReference } from "../../src/workflow/field-reference.js";
import { NODE_KINDS } from "../../src/workflow/workflow.schema.js";

const PATH = fileURLToPath(new URL("../../docs/workflow-language.md", import.meta.url));
const DOC = readFileSync(PATH, "utf8");

describe("docs/workflow-language.md", () => {
  it("holds the field reference as `npm run schema` writes it from the schema", async () => {
    const options = { ...(await resolveConfig(PATH)), filepath: PATH };
    expect(DOC).toBe(await format(withFieldReference(DOC), options));
  });

  it("gives every kind its fields, with the schema's descriptions", () => {
    const reference = renderFieldReference();
    for (const kind of NODE_KINDS) expect(reference).toContain(`### \`${kind}\``);
    expect(reference).toMatch(/\| `gates\[\]\.run` \| string \| yes \| /);
    expect(reference).toMatch(/\| `evaluator` \| `status`, `deterministic`, `agent` \| yes \|/);
    expect(reference).toMatch(/\| `max_traversals` \| integer \|/);
  });
});
