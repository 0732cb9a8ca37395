import { z } from "zod";

/** The name of the one tool a judge is forced to call. */
export const VERDICT_TOOL_NAME = "record_verdict";

/** What the tool does, as the model reads it. */
export const VERDICT_TOOL_DESCRIPTION =
  "Record your verdict: exactly one of the allowed labels, and the reasoning that supports it.";

/** The tool's input JSON Schema: `label` is an enum of the allowed labels; both fields required. */
export function verdictInputSchema(labels: readonly string[]): {
  type: "object";
  properties: Record<string, unknown>;
  required: string[];
  additionalProperties: false;
} {
  return {
    type: "object",
    properties: {
      label: { type: "string", enum: [...labels], description: "Your verdict." },
      reasoning: {
        type: "string",
        description: "Why, citing the requirement, the diff and the evidence.",
      },
    },
    required: ["label", "reasoning"],
    additionalProperties: false,
  };
}

/** A tool call's input checked against the allowed labels. */
export type ToolVerdict =
  { ok: true; label: string; reasoning: string } | { ok: false; problem: string };

/** Validates a tool call's input (already parsed from JSON) with zod. */
export function parseToolVerdict(input: unknown, labels: readonly string[]): ToolVerdict {
  const [first, ...rest] = labels;
  if (first === undefined) return { ok: false, problem: "no labels to choose from" };
  const schema = z.object({
    label: z.enum([first, ...rest]),
    reasoning: z.string().trim().min(1),
  });
  const result = schema.safeParse(input);
  if (result.success) return { ok: true, ...result.data };
  const problem = result.error.issues
    .map((issue) => `${issue.path.join(".") || "input"}: ${issue.message}`)
    .join("; ");
  return { ok: false, problem };
}
