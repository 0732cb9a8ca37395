import type { EvidenceRecord } from "../store/store.js";
import type { EvidenceLine, TokensView } from "./view/run-view.js";

/** An evidence entry's fields, read without trusting their types. */
export type EntryFields = Record<string, unknown> & { kind: string; at: number };

/** Reads a stored evidence record's entry (the store keeps it as JSON). */
export function entryOf(record: EvidenceRecord): EntryFields {
  const entry = (
    typeof record.entry === "object" && record.entry !== null ? record.entry : {}
  ) as Record<string, unknown>;
  return {
    ...entry,
    kind: typeof entry.kind === "string" ? entry.kind : "unknown",
    at: typeof entry.at === "number" ? entry.at : record.at,
  };
}

/** A field as text, or undefined when absent. Objects become JSON. */
export function textOf(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return JSON.stringify(value);
}

/** A numeric field, or undefined. */
export function numberOf(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/** Token usage as an agent or judge reported it, when it did. */
export function tokensOf(value: unknown): TokensView | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const usage = value as Record<string, unknown>;
  const input = numberOf(usage.inputTokens);
  const output = numberOf(usage.outputTokens);
  if (input === undefined || output === undefined) return undefined;
  const cached = numberOf(usage.cachedInputTokens);
  return { input, output, ...(cached === undefined ? {} : { cachedInput: cached }) };
}

/** Adds `more` tokens to `sum`. */
export function addTokens(sum: TokensView | undefined, more: TokensView | undefined) {
  if (more === undefined) return sum;
  if (sum === undefined) return more;
  const cached = (sum.cachedInput ?? 0) + (more.cachedInput ?? 0);
  return {
    input: sum.input + more.input,
    output: sum.output + more.output,
    ...(cached === 0 ? {} : { cachedInput: cached }),
  };
}

/** Facts shown for an entry, in this order, under these labels. */
const FACTS: [field: string, label: string][] = [
  ["run", "command"],
  ["agent", "engine command"],
  ["engine", "engine"],
  ["model", "model"],
  ["harnessVersion", "harness version"],
  ["checkpoint", "checkpoint"],
  ["variant", "variant"],
  ["iteration", "iteration"],
  ["evaluator", "evaluator"],
  ["verdict", "verdict"],
  ["reasoning", "reasoning"],
  ["exitCode", "exit code"],
  ["durationMs", "duration ms"],
  ["costUsd", "cost USD"],
  ["usage", "tokens"],
  ["outcome", "outcome"],
  ["label", "routed on"],
  ["to", "to"],
  ["reason", "reason"],
  ["sha", "commit"],
  ["branch", "branch"],
  ["diffStat", "diff stat"],
  ["failedGates", "failed gates"],
  ["decision", "decision"],
  ["actor", "by"],
  ["note", "note"],
  ["where", "where"],
  ["error", "error"],
  ["devbox", "DevBox"],
  ["startedBy", "started by"],
];

/** One evidence record as a timeline line: a summary and its recorded facts, nothing invented. */
export function evidenceLine(record: EvidenceRecord): EvidenceLine {
  const entry = entryOf(record);
  const facts = FACTS.flatMap(([field, label]) => {
    const value = textOf(entry[field]);
    return value === undefined || value === "" ? [] : [{ label, value }];
  });
  const output = textOf(entry.output);
  return {
    seq: record.seq,
    at: entry.at,
    kind: entry.kind,
    summary: summarize(entry),
    facts,
    ...(output === undefined || output === "" ? {} : { output }),
  };
}

function summarize(e: EntryFields): string {
  const t = (field: string) => textOf(e[field]) ?? "";
  switch (e.kind) {
    case "run.started":
      return `run started on ${t("branch")} from ${t("baseBranch")}`;
    case "node.entered":
      return `entered ${t("node")} (attempt ${t("attempt")})`;
    case "command.dispatched":
      return `ran ${e.run !== undefined ? t("run") : e.agent !== undefined ? `${t("agent")} ${t("model")}` : "a checkpoint"}`;
    case "command.finished":
      return `command finished with exit code ${t("exitCode")}`;
    case "decision.evaluated":
      return `${t("evaluator")} evaluator: ${e.verdict === undefined ? `error ${t("error")}` : t("verdict")}`;
    case "loop.iteration":
      return `iteration ${t("iteration")} ended`;
    case "checkpoint":
      return `checkpoint ${t("sha").slice(0, 12)} on ${t("branch")}`;
    case "node.finished":
      return `${t("node")} ${t("outcome")}${e.to === undefined ? "" : ` → ${t("to")}`}`;
    case "approval.requested":
      return `approval of ${t("node")} requested`;
    case "approval.answered":
      return `${t("decision")} by ${t("actor")}${e.where === undefined ? "" : ` (${t("where")})`}`;
    case "run.finished":
      return `run ${t("status")}`;
    default:
      return e.kind;
  }
}
