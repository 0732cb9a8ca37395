import { Document, isAlias, isNode, isScalar, parseDocument, visit, type Alias } from "yaml";
import { formatPath, sortFindings, type Finding } from "./finding.js";
import { WorkflowGraph } from "./graph.js";
import { GRAPH_RULES, unknownNode } from "./graph-rules.js";
import { MAX_NESTING, tooDeepAt } from "./nesting.js";
import { findSecretLiterals } from "./secret-literal.js";
import { SourceMap, yamlPath } from "./source-map.js";
import { checkSchema, meantEdgeEndpoints } from "./schema-check.js";
import type { Workflow } from "./workflow.schema.js";

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

/** Every alias must follow its anchor, and there may be at most {@link MAX_ALIASES}. */
function checkAliases(document: Document, source: SourceMap): Finding | undefined {
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
    return source.findingAt(
      "yaml",
      unresolved.range?.[0] ?? 0,
      "",
      `the alias *${unresolved.source} has no anchor &${unresolved.source} before it`,
    );
  }
  if (aliases > MAX_ALIASES) {
    return source.findingAt(
      "yaml",
      firstExtra,
      "",
      `the file uses ${aliases} aliases; at most ${MAX_ALIASES} are allowed: write the repeated parts out`,
    );
  }
  return undefined;
}

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

  const aliasFinding = checkAliases(document, source);
  if (aliasFinding !== undefined) return failed([aliasFinding]);
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
  const schema = checkSchema(data, source);
  findings.push(...schema.findings);
  findings.push(...graphFindings(schema.meant, source));

  sortFindings(findings);
  const { parsed } = schema;
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

/**
 * The graph rules' findings. They look at the graph as meant, typos read as their suggestion, so
 * that one misspelt name is one finding; only `unknown-node` looks at the edge ends as written.
 */
function graphFindings(meant: unknown, source: SourceMap): Finding[] {
  const asWritten = new WorkflowGraph(meant);
  const intended = structuredClone(meant);
  meantEdgeEndpoints(intended);
  const graph = new WorkflowGraph(intended);
  const root = isMapping(intended) ? intended : {};
  return GRAPH_RULES.flatMap((rule) =>
    rule({ graph: rule === unknownNode ? asWritten : graph, source, data: root }),
  );
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function failed(findings: Finding[]): ParseResult {
  return { ok: false, findings };
}

function yamlMessage(code: string, message: string): string {
  const first = message.split("\n")[0] ?? message;
  if (code === "DUPLICATE_KEY") return "this key appears twice in one mapping: keep one";
  return `YAML does not parse: ${first}`;
}
