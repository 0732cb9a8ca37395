import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ALL_SETTINGS } from "../../src/settings/index.js";
import { renderConfigurationDocs } from "../../src/settings/render-docs.js";

const ROOT = join(import.meta.dirname, "../..");
const COMMITTED = join(ROOT, "docs/configuration.md");

describe("docs/configuration.md", () => {
  it("is what `npm run docs:config` writes from the schema", () => {
    expect(
      readFileSync(COMMITTED, "utf8") === renderConfigurationDocs(),
      "docs/configuration.md is stale: run `npm run docs:config` and commit the result",
    ).toBe(true);
  });

  it("documents every setting with its default", () => {
    const docs = renderConfigurationDocs();
    for (const setting of ALL_SETTINGS) expect(docs).toContain(`| \`${setting.name}\` `);
    expect(docs).toMatch(/\| `CLUSTERCODE_ACK_DEADLINE_MS` +\| [^|]+\| `5000` +\| app /);
    expect(docs).toMatch(
      /\| `CLUSTERCODE_DEVBOX_LAPSE_MS` +\| [^|]+\| `15000` +\| app, CLI, DevBox agent /,
    );
  });
});
