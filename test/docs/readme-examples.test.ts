import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseWorkflow } from "../../src/workflow/parse.js";

const README = readFileSync(new URL("../../README.md", import.meta.url), "utf8");

/** The README's workflow examples: its YAML blocks. */
const EXAMPLES = [...README.matchAll(/```yaml\n([\s\S]*?)```/g)].map((match) => match[1] ?? "");

describe("the README's examples", () => {
  it("show each of the five node kinds", () => {
    const kinds = EXAMPLES.flatMap((text) => [...text.matchAll(/kind: (\w+)/g)].map((m) => m[1]));
    expect(new Set(kinds)).toEqual(new Set(["run", "decision", "loop", "prototype", "approval"]));
  });

  it.each(EXAMPLES.map((text) => [/^name: (.+)$/m.exec(text)?.[1] ?? "?", text]))(
    "%s validates with no finding at all",
    (_name, text) => {
      const parsed = parseWorkflow(text);
      expect(parsed.findings).toEqual([]);
      expect(parsed.ok).toBe(true);
    },
  );

  it.each(EXAMPLES.map((text) => [/^name: (.+)$/m.exec(text)?.[1] ?? "?", text]))(
    "%s runs offline: no built-in agent, no judge model, no secret",
    (_name, text) => {
      const parsed = parseWorkflow(text);
      if (!parsed.ok) throw new Error("invalid");
      const { workflow } = parsed;
      const declared = new Set(Object.keys(workflow.engines ?? {}));
      for (const node of Object.values(workflow.nodes)) {
        const engines =
          node.kind === "prototype"
            ? node.variants.map((variant) => variant.engine)
            : node.kind === "loop" || (node.kind === "run" && node.agent !== undefined)
              ? [node.agent?.engine ?? ""]
              : [];
        for (const engine of engines) expect(declared).toContain(engine);
        if (node.kind === "decision") expect(node.evaluator).not.toBe("agent");
        if (node.kind === "prototype") expect(node.select).toBe("first");
      }
      expect(workflow.devbox?.secrets ?? []).toEqual([]);
    },
  );
});
