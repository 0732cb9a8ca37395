import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseWorkflow } from "../../src/workflow/parse.js";

const EXAMPLES = join(import.meta.dirname, "../../workflows-schema/examples");
const files = readdirSync(EXAMPLES).filter((file) => file.endsWith(".yml"));

describe("workflows-schema/examples", () => {
  it("holds the lifecycle and the smaller examples", () => {
    expect(files).toEqual(
      expect.arrayContaining([
        "lifecycle.yml",
        "minimal.yml",
        "fix-the-tests.yml",
        "prototype-race.yml",
        "dependency-review.yml",
      ]),
    );
  });

  it.each(files.filter((file) => file !== "lifecycle.yml"))(
    "%s validates with no findings",
    (file) => {
      const result = parseWorkflow(readFileSync(join(EXAMPLES, file), "utf8"));
      expect(result.findings).toEqual([]);
      expect(result.ok).toBe(true);
    },
  );

  // The lifecycle is kept identical to the product's copy, which lists only NPM_TOKEN: each
  // built-in engine it uses is warned about once, and nothing else is found.
  it("lifecycle.yml validates, warning only that its engines' keys are not listed", () => {
    const result = parseWorkflow(readFileSync(join(EXAMPLES, "lifecycle.yml"), "utf8"));
    expect(result.findings.map((f) => [f.rule, f.severity, f.path])).toEqual([
      ["engine-without-key", "warning", "nodes.requirements.agent.engine"],
      ["engine-without-key", "warning", "nodes.design.variants[1].engine"],
    ]);
    expect(result.ok).toBe(true);
  });

  it("the ten-node lifecycle parses into its nodes and edges", () => {
    const result = parseWorkflow(readFileSync(join(EXAMPLES, "lifecycle.yml"), "utf8"));
    if (!result.ok) throw new Error("lifecycle.yml does not validate");
    expect(Object.keys(result.workflow.nodes)).toHaveLength(10);
    expect(result.workflow.nodes.design).toMatchObject({ kind: "prototype", select: "judge" });
    expect(result.workflow.edges.filter((edge) => edge.back === true)).toHaveLength(3);
  });
});
