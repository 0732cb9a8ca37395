import { Document, isAlias, isNode, isScalar, parseDocument, visit, type Alias } from "yaml";
import type { z } from "zod";
import { formatPath, sortFindings, type Finding, type PathSegment } from "./finding.js";
import { WorkflowGraph } from "./graph.js";
import { GRAPH_RULES } from "./graph-rules.js";
import { MAX_NESTING, tooDeepAt } from "./nesting.js";
import { findSecretLiterals } from "./secret-literal.js";
import { SourceMap, yamlPath } from "./source-map.js";
import { workflowSchema, type Workflow } from "./workflow.schema.js";

/** Largest workflow file accepted, in bytes. */
export const MAX_FILE_BYTES = 256 * 1024;
/** Most YAML aliases a workflow file may use. */
export const MAX_ALIASES = 100;
export { MAX_NESTING };
/** yaml's `maxAliasCount`: how far nested aliases may multiply the data they stand for. */
const MAX_ALIAS_EXPANSION = 10_000;

/** What parsing a workflow gives: the workflow and its warnings, or every finding. */
export type ParseResult =
  { ok: true; workflow: Workflow; findings: Finding[] } | { ok: false; findings: Finding[] };

/** Parses and validates workflow YAML, reporting every finding at once with its position. */
export function parseWorkflow(text: string): ParseResult {
  // TextEncoder rather than Buffer: the editor runs this validator in the browser too.
  const bytes = new TextEncoder().encode(text).byteLength;
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
  const deep = tooDeepAt(text);
  if (deep !== undefined) {
    const message = `the YAML nests deeper than ${MAX_NESTING} levels here: flatten it`;
    return failed([new SourceMap(new Document(), text).findingAt("yaml", deep, "", message)]);
  }
  const document = parseDocument(text, { uniqueKeys: true, prettyErrors: false });
  const source = new SourceMap(document, text);
  // Every duplicate key, but only the first syntax error: the ones after it are mostly echoes
  // (one stray line can make hundreds of "unexpected token" errors).
  const firstSyntaxError = document.errors.find((error) => error.code !== "DUPLICATE_KEY");
  const yamlErrors = document.errors
    .filter((error) => error.code === "DUPLICATE_KEY" || error === firstSyntaxError)
    .map((error) =>
      source.findingAt("yaml", error.pos[0], "", yamlMessage(error.code, error.message)),
    );
  if (yamlErrors.length > 0) return failed(sortFindings(yamlErrors));

  let aliases = 0;
  let firstExtra = 0;
  // Anchors in document order, as yaml resolves them: an alias must follow its anchor.
  const anchors = new Set<string>();
  let unresolved: Alias | undefined;
  visit(document, (_key, node) => {
    if (isAlias(node)) {
      if (++aliases === MAX_ALIASES + 1) firstExtra = node.range?.[0] ?? 0;
      if (!anchors.has(node.source)) unresolved ??= node;
    } else if (isNode(node) && node.anchor !== undefined) {
      anchors.add(node.anchor);
    }
  });
  if (unresolved !== undefined) {
    return failed([
      source.findingAt(
        "yaml",
        unresolved.range?.[0] ?? 0,
        "",
        `the alias *${unresolved.source} has no anchor &${unresolved.source} before it`,
      ),
    ]);
  }
  if (aliases > MAX_ALIASES) {
    return failed([
      source.findingAt(
        "yaml",
        firstExtra,
        "",
        `the file uses ${aliases} aliases; at most ${MAX_ALIASES} are allowed: write the repeated parts out`,
      ),
    ]);
  }
  let data: unknown;
  try {
    // yaml's own guard against nested aliases that expand exponentially ("billion laughs"). It
    // counts the anchor as a use, so it cannot double as the plain limit on aliases above.
    data = document.toJS({ maxAliasCount: MAX_ALIAS_EXPANSION });
  } catch (error) {
    // Every alias has its anchor (checked above), so a ReferenceError is yaml's guard.
    const message =
      error instanceof ReferenceError
        ? "the aliases in this file expand to too much data: write the repeated parts out"
        : `the file cannot be read: ${(error as Error).message}`;
    return failed([source.findingAt("yaml", 0, "", message)]);
  }

  const findings = [...findSecretLiterals(text, document, source), ...protoKeys(document, source)];
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

/**
 * `__proto__` keys, which zod drops silently from records: a node named so would vanish from the
 * parsed workflow while edges still name it.
 */
function protoKeys(document: Document, source: SourceMap): Finding[] {
  const findings: Finding[] = [];
  visit(document, {
    Pair(_key, pair, ancestors) {
      if (!isScalar(pair.key) || pair.key.value !== "__proto__") return;
      const path = formatPath([...yamlPath(ancestors, pair), "__proto__"]);
      const message = '"__proto__" cannot be a key: rename it';
      findings.push(source.findingAt("schema", pair.key.range?.[0] ?? 0, path, message));
    },
  });
  return findings;
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
  const subject = where === "" ? "the workflow" : where;
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
  if (issue.code === "custom" && issue.params?.target === "key") {
    return [source.finding("schema", path, issue.message, { target: "key" })];
  }
  if (issue.code === "invalid_type" && !exists(data, path)) {
    const field = path.at(-1);
    const parent = formatPath(path.slice(0, -1));
    const message =
      path.length === 0
        ? "the file is empty: a workflow needs version, name, on and nodes"
        : `${parent === "" ? "the workflow" : parent} needs "${String(field)}": add it`;
    return [source.finding("schema", path, message, { target: "key" })];
  }
  const message = humanize(issue, data, path);
  // Messages written as a predicate ("must be …") name their field here.
  const text = /^(must|needs) /.test(message) ? `${subject} ${message}` : message;
  return [source.finding("schema", path, text)];
}

/** zod's default messages reworded as what the value must be; custom messages kept. */
function humanize(issue: Issue, data: unknown, path: readonly PathSegment[]): string {
  const custom = !/^(Invalid|Too (small|big))/.test(issue.message);
  if (custom) return issue.message;
  switch (issue.code) {
    case "invalid_type":
      return `must be ${article(issue.expected)}, not ${describeValue(valueAt(data, path))}`;
    case "invalid_value":
      return issue.values.length === 1
        ? `must be ${JSON.stringify(issue.values[0])}`
        : `must be one of ${issue.values.map((value) => String(value)).join(", ")}`;
    case "too_small":
    case "too_big": {
      const bound = issue.code === "too_small" ? issue.minimum : issue.maximum;
      const small = issue.code === "too_small";
      if (issue.origin === "string" && small && Number(bound) === 1) return "must not be empty";
      if (issue.origin === "string")
        return `must have ${small ? "at least" : "at most"} ${bound} characters`;
      if (issue.origin === "array" || issue.origin === "set")
        return `needs ${small ? "at least" : "at most"} ${bound} item${Number(bound) === 1 ? "" : "s"}`;
      const inclusive = issue.inclusive ?? true;
      const relation = small
        ? inclusive
          ? "at least"
          : "greater than"
        : inclusive
          ? "at most"
          : "less than";
      return `must be ${relation} ${bound}`;
    }
    default:
      return path.length === 0 ? issue.message : `${formatPath(path)}: ${issue.message}`;
  }
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
  const names: Record<string, string> = {
    object: "a mapping",
    record: "a mapping",
    array: "a list",
    int: "an integer",
  };
  return names[expected] ?? `a ${expected}`;
}
