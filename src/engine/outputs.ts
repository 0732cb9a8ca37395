import type { OUTPUT_TYPES } from "../workflow/workflow.schema.js";

/** An output's declared type. */
export type OutputType = (typeof OUTPUT_TYPES)[number];
/** The run's typed state: every node output so far, by name. */
export type RunOutputs = Record<string, unknown>;

/** What a node's output file held: its values, or why they were refused. */
export type ParsedOutputs = { ok: true; values: RunOutputs } | { ok: false; reason: string };

/** Most characters of an output file the engine reads. */
export const OUTPUT_FILE_LIMIT = 64 * 1024;

/**
 * Reads the file a node wrote to CLUSTERCODE_OUTPUT_FILE: one JSON object, or `name=value` lines
 * and `name<<DELIM` … `DELIM` blocks as in GitHub Actions' $GITHUB_OUTPUT. Every name must be
 * declared under the node's `outputs`, and every value must have the declared type.
 */
export function parseOutputs(
  text: string,
  declared: Readonly<Record<string, { type: OutputType }>>,
): ParsedOutputs {
  if (text.length > OUTPUT_FILE_LIMIT) {
    return { ok: false, reason: `the output file is over ${OUTPUT_FILE_LIMIT} characters` };
  }
  const raw = text.trimStart().startsWith("{") ? fromJson(text) : fromLines(text);
  if (!raw.ok) return raw;
  const values: RunOutputs = {};
  for (const [name, value] of Object.entries(raw.values)) {
    const type = declared[name]?.type;
    if (type === undefined) {
      const names = Object.keys(declared);
      return {
        ok: false,
        reason: `output ${name} is not declared (declared: ${names.length === 0 ? "none" : names.join(", ")})`,
      };
    }
    const typed =
      typeof value === "string" && raw.text ? fromText(value, type) : check(value, type);
    if (typed === undefined) {
      return { ok: false, reason: `output ${name} is not a ${type}: ${describe(value)}` };
    }
    values[name] = typed.value;
  }
  return { ok: true, values };
}

type Raw =
  { ok: true; values: Record<string, unknown>; text: boolean } | { ok: false; reason: string };

function fromJson(text: string): Raw {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      return { ok: false, reason: "the output file's JSON is not an object" };
    }
    return { ok: true, values: value as Record<string, unknown>, text: false };
  } catch (error) {
    return { ok: false, reason: `the output file is not valid JSON: ${(error as Error).message}` };
  }
}

function fromLines(text: string): Raw {
  const values: Record<string, unknown> = {};
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] ?? "").replace(/\r$/, "");
    if (line.trim() === "") continue;
    const heredoc = /^([A-Za-z_][A-Za-z0-9_]*)<<(\S+)$/.exec(line);
    if (heredoc !== null) {
      const [, name = "", delimiter] = heredoc;
      const end = lines.findIndex((other, j) => j > i && other.replace(/\r$/, "") === delimiter);
      if (end === -1) return { ok: false, reason: `output ${name}: no closing ${delimiter} line` };
      values[name] = lines.slice(i + 1, end).join("\n");
      i = end;
      continue;
    }
    const eq = line.indexOf("=");
    if (eq <= 0)
      return { ok: false, reason: `line ${i + 1} is neither name=value nor name<<DELIM` };
    values[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return { ok: true, values, text: true };
}

/** A value written as text, as its declared type. */
function fromText(text: string, type: OutputType): { value: unknown } | undefined {
  switch (type) {
    case "string":
      return { value: text };
    case "number": {
      const value = Number(text.trim());
      return text.trim() === "" || !Number.isFinite(value) ? undefined : { value };
    }
    case "boolean":
      return text.trim() === "true"
        ? { value: true }
        : text.trim() === "false"
          ? { value: false }
          : undefined;
    case "json":
      try {
        return { value: JSON.parse(text) as unknown };
      } catch {
        return undefined;
      }
  }
}

/** A value from a JSON output file, if it has its declared type. */
function check(value: unknown, type: OutputType): { value: unknown } | undefined {
  if (type === "json") return { value };
  if (type === "number")
    return typeof value === "number" && Number.isFinite(value) ? { value } : undefined;
  return typeof value === type ? { value } : undefined;
}

function describe(value: unknown): string {
  const text =
    typeof value === "string" ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}

/** The files a node's command gets: the outputs so far, and an empty one for its own outputs. */
export function outputFiles(
  outputs: RunOutputs | undefined,
  declared: Readonly<Record<string, unknown>> | undefined,
): { outputs?: string; output?: string } {
  return {
    ...(outputs === undefined || Object.keys(outputs).length === 0
      ? {}
      : { outputs: JSON.stringify(outputs) }),
    ...(declared === undefined || Object.keys(declared).length === 0 ? {} : { output: "" }),
  };
}

/** What an agent's prompt says about the run's outputs: those so far, and those it must write. */
export function outputsPrompt(
  outputs: RunOutputs | undefined,
  declared:
    Readonly<Record<string, { type: OutputType; description?: string | undefined }>> | undefined,
): string {
  const lines: string[] = [];
  if (outputs !== undefined && Object.keys(outputs).length > 0) {
    lines.push(
      "",
      "Outputs of earlier nodes (JSON, also in the file named by CLUSTERCODE_OUTPUTS_FILE):",
      JSON.stringify(outputs),
    );
  }
  const names = Object.entries(declared ?? {});
  if (names.length > 0) {
    lines.push(
      "",
      "Write these outputs as name=value lines to the file named by CLUSTERCODE_OUTPUT_FILE:",
      ...names.map(
        ([name, output]) =>
          `- ${name} (${output.type})${output.description === undefined ? "" : `: ${output.description}`}`,
      ),
    );
  }
  return lines.length === 0 ? "" : `${lines.join("\n")}\n`;
}
