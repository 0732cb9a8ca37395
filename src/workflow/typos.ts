import type { z } from "zod";
import { suggest } from "./edit-distance.js";
import type { PathSegment } from "./finding.js";

type Schema = z.core.$ZodType;
type Issue = z.core.$ZodIssue;

/**
 * What GitHub Actions habits mean here: an unknown key that is an Actions keyword gets this
 * advice instead of "remove it". Keys under `on:` are looked up as `on.KEY`.
 */
const ACTIONS_HINTS: Record<string, string> = {
  needs:
    "nodes wait on each other through edges, not needs: add { from: <earlier node>, to: <this node> } under edges",
  if: "conditions are decision nodes here: route through a decision node whose labelled edges say where each outcome goes",
  steps:
    "a node has no steps: a run node's run holds the commands (a multi-line string, run with bash)",
  env: "nodes have no env: list secrets under devbox.secrets, and pass values between nodes as outputs and inputs",
  "runs-on": "every node runs in the run's DevBox: set its image, cpu and memory under devbox",
  jobs: "a workflow's jobs are its nodes: put them under nodes and connect them with edges",
  uses: "there are no actions to use: write the command in a run node's run, or give the node an agent and a prompt",
  "timeout-minutes": "the limit is timeout, a duration such as 30m",
  name: "a node's display name is its title",
  strategy: "to try several approaches side by side, use a prototype node with variants",
  "on.push":
    "runs start from an issue label, a /clustercode run comment or a schedule: use label, command or schedule",
};
for (const event of ["pull_request", "workflow_dispatch", "issues", "issue_comment"]) {
  ACTIONS_HINTS[`on.${event}`] = ACTIONS_HINTS["on.push"] as string;
}

/** Advice for an unknown key that is a GitHub Actions habit, if it is one. */
export function actionsHint(key: string, parent: readonly PathSegment[]): string | undefined {
  const lookup = parent.length === 1 && parent[0] === "on" ? `on.${key}` : key;
  // The `name` hint is for nodes only: the workflow has a name of its own.
  if (key === "name" && !(parent.length === 2 && parent[0] === "nodes")) return undefined;
  return Object.hasOwn(ACTIONS_HINTS, lookup) ? ACTIONS_HINTS[lookup] : undefined;
}

/** The value at `path` of `data`, if there is one. */
export function valueAt(data: unknown, path: readonly PathSegment[]): unknown {
  let current = data;
  for (const segment of path) {
    if (typeof current !== "object" || current === null) return undefined;
    current = (current as Record<PathSegment, unknown>)[segment];
  }
  return current;
}

/** The known key, not yet in the mapping, that an unknown `key` at `parent` of `data` is most likely a typo of. */
export function keySuggestion(
  schema: Schema,
  data: unknown,
  parent: readonly PathSegment[],
  key: string,
): string | undefined {
  const keys = allowedKeys(schema, data, parent);
  const mapping = valueAt(data, parent);
  // A key the mapping already has is not what this one meant ("nodez" beside "nodes").
  const free = keys?.filter((known) => !(isRecord(mapping) && Object.hasOwn(mapping, known)));
  return free === undefined ? undefined : suggest(key, free);
}

/**
 * The value a refused string most likely meant: one of an enum's values, one of a tagged
 * union's tags, or what a refinement suggested in its `params`.
 */
export function valueSuggestion(issue: Issue, value: unknown): string | undefined {
  if (typeof value !== "string") return undefined;
  if (issue.code === "custom") {
    const suggestion: unknown = issue.params?.suggestion;
    return typeof suggestion === "string" ? suggestion : undefined;
  }
  let candidates: unknown[] = [];
  if (issue.code === "invalid_value") candidates = issue.values;
  else if (issue.code === "invalid_union" && "options" in issue) {
    candidates = (issue as { options?: unknown[] }).options ?? [];
  }
  const strings = candidates.filter(
    (candidate): candidate is string => typeof candidate === "string",
  );
  return strings.length === 0 ? undefined : suggest(value, strings);
}

/** The keys the mapping at `path` may have, read from `schema`; `undefined` if not a mapping. */
function allowedKeys(
  schema: Schema,
  data: unknown,
  path: readonly PathSegment[],
): string[] | undefined {
  let current: Schema | undefined = schema;
  let value = data;
  for (const segment of path) {
    current = child(select(current, value), segment);
    value =
      isRecord(value) || Array.isArray(value)
        ? (value as Record<PathSegment, unknown>)[segment]
        : undefined;
    if (current === undefined) return undefined;
  }
  const object = select(current, value);
  return object?._zod.def.type === "object"
    ? Object.keys((object._zod.def as z.core.$ZodObjectDef).shape)
    : undefined;
}

/** `schema` without its optional/default wrappers, and a tagged union narrowed by `value`. */
function select(schema: Schema | undefined, value: unknown): Schema | undefined {
  let current = schema;
  for (let depth = 0; current !== undefined && depth < 10; depth++) {
    const def = current._zod.def as { type: string; innerType?: Schema; in?: Schema };
    if (def.innerType !== undefined) current = def.innerType;
    else if (def.type === "pipe") current = def.in;
    else if (def.type === "union") current = branch(current, value);
    else return current;
  }
  return current;
}

/** The branch of a tagged union whose tag `value` carries. */
function branch(union: Schema, value: unknown): Schema | undefined {
  const def = union._zod.def as unknown as { options: Schema[]; discriminator?: string };
  const tag = def.discriminator;
  if (tag === undefined || !isRecord(value)) return undefined;
  return def.options.find((option) => {
    const object = select(option, undefined);
    const shape = (object?._zod.def as Partial<z.core.$ZodObjectDef> | undefined)?.shape;
    const literal = shape?.[tag]?._zod.def as { values?: unknown[] } | undefined;
    return literal?.values?.includes(value[tag]) === true;
  });
}

/** The schema of `segment` inside an object, record or array schema. */
function child(schema: Schema | undefined, segment: PathSegment): Schema | undefined {
  const def = schema?._zod.def as
    | { type: string; shape?: Record<string, Schema>; valueType?: Schema; element?: Schema }
    | undefined;
  if (def?.type === "object" && def.shape !== undefined) {
    return Object.hasOwn(def.shape, segment) ? def.shape[segment] : undefined;
  }
  if (def?.type === "record") return def.valueType;
  if (def?.type === "array") return def.element;
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
