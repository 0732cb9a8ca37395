import { z } from "zod";
import { workflowSchema } from "./workflow.schema.js";

/** Where editors fetch the schema from: the copy published with the npm package. */
export const WORKFLOW_SCHEMA_ID =
  "https://unpkg.com/clustercode-workflows/workflows-schema/workflow.schema.json";

/**
 * The JSON Schema of a workflow file, for editors (yaml-language-server) and other tools.
 * Draft-07, which editors support best. It describes what may be written (zod's input side:
 * defaults are optional); refinements that JSON Schema cannot express, such as "cron must be a
 * valid five-field expression", are left to `clustercode validate`.
 */
export function workflowJsonSchema(): Record<string, unknown> {
  const generated = z.toJSONSchema(workflowSchema, {
    target: "draft-07",
    io: "input",
    unrepresentable: "any",
  });
  const { $schema, ...rest } = generated;
  return {
    $schema,
    $id: WORKFLOW_SCHEMA_ID,
    title: "ClusterCode workflow",
    ...rest,
  };
}

/** The schema file as committed: two-space JSON with a final newline. */
export function renderJsonSchema(): string {
  return JSON.stringify(workflowJsonSchema(), null, 2) + "\n";
}
