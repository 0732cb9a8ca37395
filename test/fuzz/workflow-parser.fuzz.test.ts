import fc from "fast-check";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseWorkflow } from "../../src/workflow/parse.js";
import { runs, SOAK_TIMEOUT } from "./fuzz-size.js";

const LIFECYCLE = readFileSync(
  new URL("../../workflows-schema/examples/lifecycle.yml", import.meta.url),
  "utf8",
);

/** Every finding names a rule, a severity and a line within the file. */
function expectFindings(text: string): void {
  const result = parseWorkflow(text);
  if (result.ok) return;
  expect(result.findings.length).toBeGreaterThan(0);
  const lines = text.split("\n").length;
  for (const finding of result.findings) {
    expect(typeof finding.rule).toBe("string");
    expect(finding.message.length).toBeGreaterThan(0);
    expect(finding.line).toBeGreaterThanOrEqual(1);
    expect(finding.line).toBeLessThanOrEqual(lines + 1);
  }
}

/** A YAML-ish line made of the pieces workflow files are made of. */
const piece = fc.constantFrom(
  "version: 1",
  "name: x",
  "on: { label: go }",
  "nodes:",
  "  a:",
  "    kind: run",
  "    kind: loop",
  "    kind: decision",
  "    run: echo hi",
  "    budget: { max_iterations: 3 }",
  "    timeout: 10m",
  "    timeout: 99999999999999999999d",
  "edges:",
  "  - { from: a, to: done }",
  "  - { from: a, to: a, back: true }",
  "on: { schedule: [{ cron: '61 * * * *' }] }",
  "on: { schedule: [{ cron: '*/5 * * * *', timezone: Mars/Olympus }] }",
  "&a [*a]",
  "- *x",
  "? [a, b]",
  "!!binary AAAA",
  "\t",
  "'unterminated",
  "\u202e\u2066",
);

describe("the workflow parser and validator under fuzzing", { timeout: SOAK_TIMEOUT }, () => {
  it("gives findings with lines, never a crash, for any text", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 400 }), (text) => expectFindings(text)),
      { numRuns: runs(300, 20_000) },
    );
  });

  it("gives findings with lines for files made of workflow pieces in any order", () => {
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 30 }), (lines) => expectFindings(lines.join("\n"))),
      { numRuns: runs(300, 20_000) },
    );
  });

  it("gives findings for the lifecycle with any line dropped, duplicated or truncated", () => {
    const lines = LIFECYCLE.split("\n");
    fc.assert(
      fc.property(
        fc.nat({ max: lines.length - 1 }),
        fc.constantFrom("drop", "twice", "cut"),
        fc.nat({ max: 40 }),
        (index, change, cut) => {
          const changed = lines.flatMap((line, i) => {
            if (i !== index) return [line];
            if (change === "drop") return [];
            if (change === "twice") return [line, line];
            return [line.slice(0, cut)];
          });
          expectFindings(changed.join("\n"));
        },
      ),
      { numRuns: runs(200, 5_000) },
    );
  });

  it("refuses an alias bomb, deep nesting and a huge file with a finding", () => {
    const laughs = [
      "a: &a [x, x, x, x, x, x, x, x, x, x]",
      ...Array.from({ length: 9 }, (_, i) => {
        const prev = String.fromCharCode(97 + i);
        const name = String.fromCharCode(98 + i);
        return `${name}: &${name} [${Array(10).fill(`*${prev}`).join(", ")}]`;
      }),
    ].join("\n");
    const deep = `${"[".repeat(10_000)}${"]".repeat(10_000)}`;
    const deepMap = Array.from({ length: 5_000 }, (_, i) => `${" ".repeat(i)}k:`).join("\n");
    const huge = `name: x\n# ${"x".repeat(3 * 1024 * 1024)}\n`;
    for (const text of [laughs, deep, deepMap, huge]) {
      const result = parseWorkflow(text);
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.findings[0]?.rule).toBe("yaml");
    }
  });
});
