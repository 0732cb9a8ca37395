import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { Ajv } from "ajv";
import { renderJsonSchema, workflowJsonSchema } from "../../src/workflow/json-schema.js";

const ROOT = join(import.meta.dirname, "../..");
const COMMITTED = join(ROOT, "workflows-schema/workflow.schema.json");
const EXAMPLES = join(ROOT, "workflows-schema/examples");

type JsonSchema = Record<string, unknown>;
const matching = (pattern: RegExp): unknown => expect.stringMatching(pattern);

/** Every `properties` entry in the schema, with its path; an `if` only tests, so it is skipped. */
function properties(schema: unknown, path = "#"): [string, JsonSchema][] {
  if (typeof schema !== "object" || schema === null) return [];
  if (Array.isArray(schema)) return schema.flatMap((item, i) => properties(item, `${path}/${i}`));
  const found: [string, JsonSchema][] = [];
  for (const [key, value] of Object.entries(schema as JsonSchema)) {
    if (key === "if") continue;
    if (key === "properties" && typeof value === "object" && value !== null) {
      for (const [name, property] of Object.entries(value as JsonSchema)) {
        found.push([`${path}/properties/${name}`, property as JsonSchema]);
      }
    }
    found.push(...properties(value, `${path}/${key}`));
  }
  return found;
}

describe("workflows-schema/workflow.schema.json", () => {
  it("is up to date with workflow.schema.ts", () => {
    const committed = readFileSync(COMMITTED, "utf8");
    expect(
      committed === renderJsonSchema(),
      "workflows-schema/workflow.schema.json is stale: run `npm run schema` and commit the result",
    ).toBe(true);
  });

  it("identifies itself for editors", () => {
    const schema = workflowJsonSchema();
    expect(schema).toMatchObject({
      $schema: "http://json-schema.org/draft-07/schema#",
      $id: matching(/^https:\/\/.*workflow\.schema\.json$/),
      title: matching(/\w/),
      description: matching(/\w/),
    });
  });

  it("describes every property", () => {
    const all = properties(workflowJsonSchema());
    expect(all.length).toBeGreaterThan(60);
    const undescribed = all
      .filter(
        ([, property]) => typeof property.description !== "string" || property.description === "",
      )
      .map(([path]) => path);
    expect(undescribed).toEqual([]);
  });

  it("tells editors the id pattern of nodes and the ranges the validator enforces", () => {
    const schema = workflowJsonSchema() as {
      properties: Record<string, JsonSchema>;
    };
    expect(schema.properties.nodes).toMatchObject({
      maxProperties: 20,
      propertyNames: { pattern: "^(?!(?:done|failed|escalated)$)[a-z][a-z0-9_-]{0,39}$" },
    });
    const text = JSON.stringify(schema);
    expect(text).toContain('"minimum":1,"maximum":50');
    expect(text).toContain('"minimum":1,"maximum":20');
    expect(text).toContain('"minItems":2,"maxItems":6');
  });

  describe("accepts every example and refuses broken ones", () => {
    // Ajv, as other tools would check files; patternErrorMessage is the editors' own keyword.
    const ajv = new Ajv({ allErrors: true });
    ajv.addKeyword("patternErrorMessage");
    const validator = ajv.compile(workflowJsonSchema());
    const check = {
      safeParse: (data: unknown) => {
        const success = validator(data);
        return { success, error: success ? undefined : { issues: validator.errors } };
      },
    };
    const files = readdirSync(EXAMPLES).filter((file) => file.endsWith(".yml"));

    it.each(files)("accepts %s", (file) => {
      const data: unknown = parse(readFileSync(join(EXAMPLES, file), "utf8"));
      expect(check.safeParse(data).error?.issues ?? []).toEqual([]);
    });

    it("refuses an unknown key, a bad node id and a missing field", () => {
      const minimal = parse(readFileSync(join(EXAMPLES, "minimal.yml"), "utf8")) as JsonSchema;
      expect(check.safeParse({ ...minimal, nodez: {} }).success).toBe(false);
      expect(
        check.safeParse({ ...minimal, nodes: { Format: { kind: "run", run: "x" } } }).success,
      ).toBe(false);
      expect(
        check.safeParse({ ...minimal, nodes: { f: { kind: "loop", goal: "g" } } }).success,
      ).toBe(false);
    });
  });
});
