import { expect } from "vitest";
import type { Finding, RuleId } from "../../src/workflow/finding.js";
import { parseWorkflow, type ParseResult } from "../../src/workflow/parse.js";

/** Strips the indentation common to all lines, so workflows can be written inline. */
export function yaml(strings: TemplateStringsArray, ...values: unknown[]): string {
  const text = String.raw({ raw: strings }, ...values).replace(/^\n/, "");
  const lines = text.split("\n");
  const indents = lines
    .filter((line) => line.trim() !== "")
    .map((line) => /^ */.exec(line)![0].length);
  const indent = Math.min(...indents);
  return lines
    .map((line) => line.slice(indent))
    .join("\n")
    .replace(/\s*$/, "\n");
}

/**
 * A small valid header followed by `nodes` and `edges` sections. The DevBox lists the built-in
 * engines' keys, so that only a test about them sees `engine-without-key`.
 */
export function workflow(nodes: string, edges = ""): string {
  const header =
    "version: 1\nname: t\non:\n  label: go\ndevbox: { secrets: [ANTHROPIC_API_KEY, OPENAI_API_KEY] }\n";
  return `${header}nodes:\n${indent(nodes)}${edges === "" ? "" : `edges:\n${indent(edges)}`}`;
}

function indent(block: string): string {
  return block
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => `  ${line}`)
    .join("\n")
    .concat("\n");
}

/** 1-based line and column of the `occurrence`-th appearance of `needle` in `text`. */
export function at(text: string, needle: string, occurrence = 1): { line: number; column: number } {
  let offset = -1;
  for (let seen = 0; seen < occurrence; seen++) {
    offset = text.indexOf(needle, offset + 1);
    if (offset === -1) throw new Error(`"${needle}" occurs fewer than ${occurrence} times`);
  }
  const before = text.slice(0, offset).split("\n");
  return { line: before.length, column: (before.at(-1) ?? "").length + 1 };
}

/** Validates `text` and returns the result. */
export function validate(text: string): ParseResult {
  return parseWorkflow(text);
}

/** The findings of one rule. */
export function findingsOf(text: string, rule: RuleId): Finding[] {
  return validate(text).findings.filter((finding) => finding.rule === rule);
}

/** Asserts that `text` has exactly one finding of `rule`, where `needle` is, and returns it. */
export function expectOne(
  text: string,
  rule: RuleId,
  where: { needle: string; occurrence?: number },
  severity: "error" | "warning" = "error",
): Finding {
  const findings = findingsOf(text, rule);
  expect(findings, JSON.stringify(validate(text).findings, null, 2)).toHaveLength(1);
  const [finding] = findings as [Finding];
  expect(finding).toMatchObject({ rule, severity, ...at(text, where.needle, where.occurrence) });
  return finding;
}

/** Asserts that `text` is valid and has no finding at all. */
export function expectClean(text: string): void {
  const result = validate(text);
  expect(result.findings).toEqual([]);
  expect(result.ok).toBe(true);
}
