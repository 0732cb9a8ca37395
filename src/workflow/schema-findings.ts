import type { z } from "zod";
import { didYouMean } from "./edit-distance.js";
import { formatPath, type Finding, type PathSegment } from "./finding.js";
import type { SourceMap } from "./source-map.js";
import { actionsHint, keySuggestion, valueAt, valueSuggestion } from "./typos.js";
import { workflowSchema } from "./workflow.schema.js";

type Issue = z.core.$ZodIssue;

/** Maps a path of the data as meant to the path as written, where a typo was read as meant. */
export type WrittenPath = (path: readonly PathSegment[]) => PathSegment[];

/**
 * A zod issue as findings a person can act on: a misspelt key or value says what it most likely
 * meant, and a GitHub Actions keyword says what does its job here.
 */
export function schemaFindings(
  issue: Issue,
  data: unknown,
  source: SourceMap,
  written: WrittenPath = (path) => [...path],
): Finding[] {
  const path = issue.path.filter((segment): segment is PathSegment => typeof segment !== "symbol");
  const at = written(path);
  const where = formatPath(at);
  const subject = where === "" ? "the workflow" : where;
  if (issue.code === "unrecognized_keys") {
    return issue.keys.map((key) => unknownKey(key, path, data, source, written));
  }
  if (issue.code === "invalid_key") {
    const inner = issue.issues[0]?.message ?? issue.message;
    return [source.finding("schema", at, inner, { target: "key" })];
  }
  if (issue.code === "custom" && issue.params?.target === "key") {
    return [source.finding("schema", at, issue.message, { target: "key" })];
  }
  if (issue.code === "invalid_type" && !exists(data, path)) {
    const field = path.at(-1);
    const parent = formatPath(at.slice(0, -1));
    const message =
      path.length === 0
        ? "the file is empty: a workflow needs version, name, on and nodes"
        : `${parent === "" ? "the workflow" : parent} needs "${String(field)}": add it`;
    return [source.finding("schema", at, message, { target: "key" })];
  }
  const message = humanize(issue, data, path);
  // Messages written as a predicate ("must be …") name their field here.
  const text = /^(must|needs) /.test(message) ? `${subject} ${message}` : message;
  const suggestion = valueSuggestion(issue, valueAt(data, path));
  // A refinement that suggests says so in its own message.
  const full =
    suggestion === undefined || issue.code === "custom"
      ? text
      : `${text}: ${didYouMean(suggestion)}`;
  return [source.finding("schema", at, full, { suggestion })];
}

/** An unknown key: what it most likely meant, what an Actions habit means here, or remove it. */
function unknownKey(
  key: string,
  path: PathSegment[],
  data: unknown,
  source: SourceMap,
  written: WrittenPath,
): Finding {
  const where = formatPath(written(path));
  const hint = actionsHint(key, path);
  const suggestion =
    hint === undefined ? keySuggestion(workflowSchema, data, path, key) : undefined;
  const advice =
    hint ?? (suggestion === undefined ? "remove it or fix its spelling" : didYouMean(suggestion));
  const message = `unknown key "${key}"${where === "" ? "" : ` in ${where}`}: ${advice}`;
  return source.finding("schema", written([...path, key]), message, { target: "key", suggestion });
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
