import type { z } from "zod";
import { suggest } from "./edit-distance.js";
import type { Finding, PathSegment } from "./finding.js";
import { isTerminal, TERMINALS } from "./graph.js";
import { schemaFindings, type WrittenPath } from "./schema-findings.js";
import type { SourceMap } from "./source-map.js";
import { actionsHint, keySuggestion, valueAt, valueSuggestion } from "./typos.js";
import { workflowSchema, type Workflow } from "./workflow.schema.js";

type Issue = z.core.$ZodIssue;

/** The schema's verdict on a workflow, and the workflow as its author most likely meant it. */
export interface SchemaCheck {
  parsed: z.ZodSafeParseResult<Workflow>;
  findings: Finding[];
  /**
   * The parsed YAML with each typo that has one clear suggestion read as that suggestion: the
   * graph rules look at this, so a misspelt key or edge target is reported once, as a typo, and
   * not again as the unreachable node or missing field it would otherwise cause.
   */
  meant: unknown;
}

/** A key renamed in the data as meant: at `parent`, `from` as written, `to` as meant. */
interface Rename {
  parent: PathSegment[];
  from: string;
  to: string;
}

/**
 * Validates `data` against the workflow schema. When some findings are typos with a clear
 * suggestion, validates again with the typos read as meant and reports the typos plus that second
 * pass's findings: what the typo alone caused (a "needs run" for `runn`) is not reported.
 */
export function checkSchema(data: unknown, source: SourceMap): SchemaCheck {
  const parsed = workflowSchema.safeParse(data);
  if (parsed.success) return { parsed, findings: [], meant: data };
  const meant = structuredClone(data);
  const renames: Rename[] = [];
  const typos: Finding[] = [];
  for (const issue of parsed.error.issues) {
    typos.push(...readAsMeant(issue, data, meant, renames, source));
  }
  if (typos.length === 0) {
    const findings = parsed.error.issues.flatMap((issue) => schemaFindings(issue, data, source));
    return { parsed, findings, meant: data };
  }
  // Findings of the second pass are placed where their keys are written, typos and all.
  const written: WrittenPath = (path) => writtenPath(path, renames);
  const issues = workflowSchema.safeParse(meant).error?.issues ?? [];
  const rest = issues.flatMap((issue) => schemaFindings(issue, meant, source, written));
  return { parsed, findings: [...typos, ...rest], meant };
}

/**
 * Corrects in `meant` each typo of `issue` that has one clear suggestion, returning the findings
 * of the typos corrected (the second pass will not see them).
 */
function readAsMeant(
  issue: Issue,
  data: unknown,
  meant: unknown,
  renames: Rename[],
  source: SourceMap,
): Finding[] {
  const path = issue.path.filter((segment): segment is PathSegment => typeof segment !== "symbol");
  if (issue.code === "unrecognized_keys") {
    const parent = valueAt(meant, path);
    const fixed = issue.keys.filter((key) => {
      if (actionsHint(key, path) !== undefined) return false;
      const to = keySuggestion(workflowSchema, data, path, key);
      if (to === undefined || !isMapping(parent) || Object.hasOwn(parent, to)) return false;
      renameKey(parent, key, to);
      renames.push({ parent: path, from: key, to });
      return true;
    });
    if (fixed.length === 0) return [];
    return schemaFindings({ ...issue, keys: fixed }, data, source);
  }
  const suggestion = valueSuggestion(issue, valueAt(data, path));
  const parent = valueAt(meant, path.slice(0, -1));
  const field = path.at(-1);
  if (suggestion === undefined || field === undefined || !isMapping(parent)) return [];
  parent[field] = suggestion;
  return schemaFindings(issue, data, source);
}

/**
 * Reads each edge endpoint that names no node or terminal as the node it is most likely a typo
 * of, in place: the `unknown-node` rule reports the typo; the other graph rules see the edge.
 */
export function meantEdgeEndpoints(meant: unknown): void {
  if (!isMapping(meant) || !Array.isArray(meant.edges)) return;
  const ids = isMapping(meant.nodes) ? Object.keys(meant.nodes) : [];
  const known = new Set(ids);
  for (const edge of meant.edges as unknown[]) {
    if (!isMapping(edge)) continue;
    for (const end of ["from", "to"] as const) {
      const id = edge[end];
      if (typeof id !== "string" || known.has(id) || isTerminal(id)) continue;
      const meantId = suggest(id, end === "to" ? [...ids, ...TERMINALS] : ids);
      if (meantId !== undefined) edge[end] = meantId;
    }
  }
}

/** Renames `from` to `to` in place, keeping the order of the keys (the first node is the entry). */
function renameKey(mapping: Record<string, unknown>, from: string, to: string): void {
  const entries = Object.entries(mapping);
  for (const key of Object.keys(mapping)) delete mapping[key];
  for (const [key, value] of entries) mapping[key === from ? to : key] = value;
}

function writtenPath(path: readonly PathSegment[], renames: readonly Rename[]): PathSegment[] {
  const result = [...path];
  for (const { parent, from, to } of renames) {
    const under = parent.every((segment, index) => result[index] === segment);
    if (under && result[parent.length] === to) result[parent.length] = from;
  }
  return result;
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
