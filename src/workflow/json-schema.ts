import { z } from "zod";
import { TERMINALS } from "./graph.js";
import { MAX_NODES } from "./graph-rules.js";
import { ID_PATTERN, NODE_KINDS, workflowSchema, type NodeKind } from "./workflow.schema.js";

/** Where editors fetch the schema from: the copy published with the npm package. */
export const WORKFLOW_SCHEMA_ID =
  "https://unpkg.com/clustercode-workflows/workflows-schema/workflow.schema.json";

type JsonObject = Record<string, unknown>;

const KIND_HELP =
  "The node kind: run (one agent turn or command), loop (iterate until the gates pass), prototype (variants race), decision (route on a label) or approval (wait for a person).";

/**
 * The JSON Schema of a workflow file, for editors (yaml-language-server) and other tools.
 * Draft-07, which editors support best. It describes what may be written (zod's input side:
 * defaults are optional) and carries every rule JSON Schema can say: the node limit, reserved
 * ids, a loop's gates and iteration cap, the cron shape. What needs the whole graph
 * (reachability, labels, DevBox analysis, unknown engines and nodes) or code (cron values, time
 * zones) is left to `clustercode validate`.
 */
export function workflowJsonSchema(): JsonObject {
  const generated = z.toJSONSchema(workflowSchema, {
    target: "draft-07",
    io: "input",
    unrepresentable: "any",
  });
  const { $schema, ...rest } = generated;
  const schema: JsonObject = { $schema, $id: WORKFLOW_SCHEMA_ID, title: "ClusterCode workflow" };
  Object.assign(schema, rest);
  const nodes = child(schema, "properties", "nodes");
  nodes.maxProperties = MAX_NODES;
  nodes.propertyNames = {
    type: "string",
    // The id pattern, minus the terminals (reserved-id).
    pattern: `^(?!(?:${TERMINALS.join("|")})$)${ID_PATTERN.source.slice(1)}`,
    patternErrorMessage: `node ids are lower-case letters, digits, "-" or "_", start with a letter, are at most 40 characters and are not ${TERMINALS.join(", ")}`,
  };
  nodes.additionalProperties = selectByKind(child(nodes, "additionalProperties"));
  return schema;
}

/**
 * zod writes the node union as a `oneOf`, which editors answer with the kinds of the branches
 * that came closest (`Value must be "run" | "decision"`) and complete with the one kind that
 * matched. One `enum` of the five kinds, and an `if`/`then` per kind, select the branch by `kind`
 * alone: a typo lists every kind, and completion offers every kind and the chosen kind's fields.
 */
function selectByKind(union: JsonObject): JsonObject {
  const branches = union.oneOf;
  if (!Array.isArray(branches) || branches.length !== NODE_KINDS.length) {
    throw new Error("the node schema is no longer a union of the five kinds");
  }
  return {
    type: "object",
    properties: { kind: { enum: [...NODE_KINDS], description: KIND_HELP } },
    required: ["kind"],
    allOf: (branches as JsonObject[]).map((branch) => {
      const kind = child(branch, "properties", "kind").const as NodeKind;
      return {
        if: { properties: { kind: { const: kind } }, required: ["kind"] },
        then: kind === "loop" ? withLoopContract(branch) : branch,
      };
    }),
  };
}

/** The loop-contract rule: gates (at least one) and `budget.max_iterations` are required. */
function withLoopContract(loop: JsonObject): JsonObject {
  const gates = child(loop, "properties", "gates");
  const budget = child(loop, "properties", "budget");
  return {
    ...loop,
    properties: {
      ...child(loop, "properties"),
      gates: { ...gates, minItems: 1 },
      budget: { ...budget, required: ["max_iterations"] },
    },
    required: [...(loop.required as string[]), "gates", "budget"],
  };
}

function child(object: JsonObject, ...path: string[]): JsonObject {
  let current: unknown = object;
  for (const key of path) {
    current = (current as JsonObject | undefined)?.[key];
    if (typeof current !== "object" || current === null) {
      throw new Error(`the generated JSON Schema has no object at ${path.join(".")}`);
    }
  }
  return current as JsonObject;
}

/** The schema file as committed: two-space JSON with a final newline. */
export function renderJsonSchema(): string {
  return JSON.stringify(workflowJsonSchema(), null, 2) + "\n";
}
