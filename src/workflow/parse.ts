import { LineCounter, parseDocument, visit } from "yaml";
import type { z } from "zod";
import { formatPath, sortFindings, type Finding, type PathSegment } from "./finding.js";
import { WorkflowGraph } from "./graph.js";
import { GRAPH_RULES } from "./graph-rules.js";
import { findSecretLiterals } from "./secret-literal.js";
import { SourceMap } from "./source-map.js";
import { workflowSchema, type Workflow } from "./workflow.schema.js";

/** Largest workflow file accepted, in bytes. */
export const MAX_FILE_BYTES = 256 * 1024;
/** Most YAML aliases a workflow file may use. */
export const MAX_ALIASES = 100;

/** What parsing a workflow gives: the workflow and its warnings, or every finding. */
export type ParseResult =
  { ok: true; workflow: Workflow; findings: Finding[] } | { ok: false; findings: Finding[] };

/** Parses and validates workflow YAML, reporting every finding at once with its position. */
export function parseWorkflow(text: string): ParseResult {
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > MAX_FILE_BYTES) {
    return failed([
      {
        rule: "yaml",
        severity: "error",
        message: `the file is ${bytes} bytes; workflows are limited to ${MAX_FILE_BYTES} bytes (256 KiB): move long prompts into the repository`,
        path: "",
        line: 1,
        column: 1,
      },
    ]);
  }
  const lines = new LineCounter();
  const document = parseDocument(text, {
    lineCounter: lines,
    uniqueKeys: true,
    prettyErrors: false,
  });
  const source = new SourceMap(document, lines);
  const yamlErrors = document.errors.map((error) =>
    source.findingAt("yaml", error.pos[0], "", yamlMessage(error.code, error.message)),
  );
  if (yamlErrors.length > 0) return failed(yamlErrors);

  let aliases = 0;
  visit(document, { Alias: () => void aliases++ });
  if (aliases > MAX_ALIASES) {
    return failed([
      source.findingAt(
        "yaml",
        0,
        "",
        `the file uses ${aliases} aliases; at most ${MAX_ALIASES} are allowed: write the repeated parts out`,
      ),
    ]);
  }
  let data: unknown;
  try {
    data = document.toJS({ maxAliasCount: MAX_ALIASES });
  } catch (error) {
    return failed([
      source.findingAt("yaml", 0, "", `the file cannot be read: ${(error as Error).message}`),
    ]);
  }

  const findings = findSecretLiterals(document, source);
  const parsed = workflowSchema.safeParse(data);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) findings.push(...schemaFindings(issue, data, source));
  }
  const root = typeof data === "object" && data !== null ? (data as Record<string, unknown>) : {};
  const context = { graph: new WorkflowGraph(data), source, data: root };
  for (const rule of GRAPH_RULES) findings.push(...rule(context));

  sortFindings(findings);
  if (!parsed.success || findings.some((finding) => finding.severity === "error"))
    return failed(findings);
  return { ok: true, workflow: parsed.data, findings };
}

function failed(findings: Finding[]): ParseResult {
  return { ok: false, findings };
}

function yamlMessage(code: string, message: string): string {
  const first = message.split("\n")[0] ?? message;
  if (code === "DUPLICATE_KEY") return "this key appears twice in one mapping: keep one";
  return `YAML does not parse: ${first}`;
}

type Issue = z.core.$ZodIssue;

/** A zod issue as findings a person can act on. */
function schemaFindings(issue: Issue, data: unknown, source: SourceMap): Finding[] {
  const path = issue.path.filter((segment): segment is PathSegment => typeof segment !== "symbol");
  const where = formatPath(path);
  if (issue.code === "unrecognized_keys") {
    return issue.keys.map((key) =>
      source.finding(
        "schema",
        [...path, key],
        `unknown key "${key}"${where === "" ? "" : ` in ${where}`}: remove it or fix its spelling`,
        { target: "key" },
      ),
    );
  }
  if (issue.code === "invalid_key") {
    const inner = issue.issues[0]?.message ?? issue.message;
    return [source.finding("schema", path, inner, { target: "key" })];
  }
  if (issue.code === "invalid_type" && !exists(data, path)) {
    const field = path.at(-1);
    const parent = formatPath(path.slice(0, -1));
    const message =
      path.length === 0
        ? "the file is empty: a workflow needs version, name, on and nodes"
        : `${parent === "" ? "the workflow" : parent} needs "${String(field)}"`;
    return [source.finding("schema", path, message, { target: "key" })];
  }
  if (issue.code === "invalid_type") {
    const got = describeValue(valueAt(data, path));
    const message = issue.message.startsWith("Invalid input")
      ? `${where === "" ? "the workflow" : where} must be ${article(issue.expected)}, not ${got}`
      : issue.message;
    return [source.finding("schema", path, message)];
  }
  const message =
    issue.message.startsWith("Invalid") && where !== ""
      ? `${where}: ${issue.message}`
      : issue.message;
  return [source.finding("schema", path, message)];
}

function valueAt(data: unknown, path: readonly PathSegment[]): unknown {
  let current = data;
  for (const segment of path) {
    if (typeof current !== "object" || current === null) return undefined;
    current = (current as Record<PathSegment, unknown>)[segment];
  }
  return current;
}

function exists(data: unknown, path: readonly PathSegment[]): boolean {
  if (path.length === 0) return data !== undefined && data !== null;
  const parent = valueAt(data, path.slice(0, -1));
  return typeof parent === "object" && parent !== null && (path.at(-1) as PathSegment) in parent;
}

function describeValue(value: unknown): string {
  if (value === null || value === undefined) return "empty";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  return `${typeof value} ${JSON.stringify(value)}`;
}

function article(expected: string): string {
  const names: Record<string, string> = { object: "a mapping", array: "a list", int: "an integer" };
  return names[expected] ?? `a ${expected}`;
}
