import type { EvidenceEntry } from "../engine/model.js";
import { terminalJson, terminalText } from "./terminal-text.js";

/** How many of a failed command's last output lines are shown. */
const FAILED_OUTPUT_LINES = 12;

/**
 * Tells a run's evidence the way a person follows it, entry by entry in order (as `run` prints
 * it live and `log` reads it back): it remembers what each dispatched command was, so a finished
 * one is named by its text, and a failed one shows that text and the end of its output.
 */
export class EvidenceNarrator {
  readonly #commands = new Map<unknown, { label: string; text: string }>();
  #isolationTold = false;

  /**
   * The lines for `entry`, none for the quiet kinds; what commands and agents wrote in them
   * (output, reasons, reasoning) is made safe for a terminal.
   */
  lines(entry: EvidenceEntry): string[] {
    return this.#lines(entry).flatMap((line) => terminalText(line).split("\n"));
  }

  #lines(entry: EvidenceEntry): string[] {
    if (entry.kind === "command.dispatched") {
      this.#remember(entry);
      return [];
    }
    if (entry.kind === "devbox.ready" && typeof entry.isolation === "string") {
      // Said once per run: how its DevBoxes are walled off (or that they are not).
      if (this.#isolationTold) return [];
      this.#isolationTold = true;
      const unsafe = entry.isolation.startsWith("none");
      return [`  ${unsafe ? "⚠" : "·"} DevBox isolation: ${entry.isolation}`];
    }
    if (entry.kind !== "command.finished") {
      const line = describeEvidence(entry);
      return line === undefined ? [] : [line];
    }
    const command = this.#commands.get(entry.command);
    const line = describeEvidence({ ...entry, command: command?.label ?? entry.command });
    if (entry.exitCode === 0 || line === undefined) return line === undefined ? [] : [line];
    const text = (command?.text ?? "").split("\n").filter((part) => part.trim() !== "");
    const output = typeof entry.output === "string" ? entry.output : "";
    const tail = output.trimEnd().split("\n").slice(-FAILED_OUTPUT_LINES);
    return [
      line,
      ...text.map((part) => `    $ ${part}`),
      ...(output.trim() === "" ? ["    (no output)"] : tail.map((part) => `    │ ${part}`)),
    ];
  }

  #remember(entry: EvidenceEntry): void {
    const what = [entry.run, entry.agent, entry.checkpoint].find(
      (text) => typeof text === "string",
    );
    const label = entry.agent === what && what !== undefined ? `agent ${what}` : what;
    const text = typeof what === "string" ? what : String(entry.command);
    this.#commands.set(entry.command, {
      label: firstLine(typeof label === "string" ? label : String(entry.command)),
      text: entry.run === what ? text : "",
    });
  }
}

/** One evidence record as `log` prints it: a JSON line, or numbered, timed lines. */
export function renderRecord(
  record: { seq: number; entry: unknown },
  narrator: EvidenceNarrator,
  format: "human" | "json",
): string {
  if (format === "json")
    return `${terminalJson({ seq: record.seq, ...(record.entry as object) })}\n`;
  const entry = record.entry as Parameters<EvidenceNarrator["lines"]>[0];
  const [first = entry.kind, ...more] = narrator.lines(entry);
  const head = `${String(record.seq).padStart(4)}  ${new Date(entry.at).toISOString()}  `;
  return [`${head}${first}`, ...more.map((line) => `${" ".repeat(head.length)}${line}`)]
    .map((line) => `${line}\n`)
    .join("");
}

/** One line for an evidence entry a person follows, or undefined for the quiet ones. */
export function describeEvidence(entry: EvidenceEntry): string | undefined {
  const e = entry as EvidenceEntry & Record<string, string | number | undefined>;
  switch (entry.kind) {
    case "node.entered":
      return `▶ ${e.node} (${e.nodeKind}${visitNote(e.visit)}${attemptNote(e.attempt)})`;
    case "command.finished":
      return `  ${e.exitCode === 0 ? "✓" : "✗"} ${e.command}: exit ${e.exitCode} in ${formatMs(Number(e.durationMs))}${e.costUsd === undefined ? "" : ` ($${Number(e.costUsd).toFixed(2)})`}`;
    case "loop.iteration":
      return `  ↻ iteration ${e.iteration}: ${(entry.failedGates as string[]).length === 0 ? "all gates passed" : `failed ${(entry.failedGates as string[]).join(", ")}`}`;
    case "decision.evaluated":
      return `  ◆ ${e.evaluator}: ${e.verdict ?? e.error}${e.reasoning === undefined ? "" : ` (${e.reasoning})`}`;
    case "node.finished":
      return `■ ${e.node}: ${e.outcome}${e.to === undefined ? "" : ` → ${e.to}`}${reasonNote(e.reason)}`;
    case "approval.requested":
      return `⏸ ${e.node} waits for approval${e.message === undefined ? "" : `: ${e.message}`}`;
    case "approval.answered":
      return `  ✔ ${e.decision} by ${e.actor}`;
    case "node.stopping":
      return `  ⏹ ${e.node} stopped (${e.reason}): checkpointing its work first`;
    case "budget.reset":
      return `  ↺ budgets reset by ${e.actor} for ${e.node}`;
    case "back-edge.exhausted":
      return `  ⤺ ${e.from} → ${e.to} reached its cap of ${e.cap}`;
    case "attempt.lost":
      return `  ⚠ attempt ${e.attempt ?? ""} lost: ${e.reason}`;
    case "run.finished":
      return `● run ${e.status}${reasonNote(e.reason)}`;
    default:
      return undefined;
  }
}

/** Lines of a multi-line reason (a failed setup's output) shown under it, the last ones. */
export const REASON_TAIL_LINES = 20;

/**
 * A reason after what it explains: its first line in parentheses, and the output that follows
 * it (a failed `devbox.setup` command's) as indented lines, the last {@link REASON_TAIL_LINES}.
 */
export function reasonNote(reason: string | number | undefined): string {
  if (reason === undefined) return "";
  const [first = "", ...rest] = terminalText(String(reason)).trimEnd().split("\n");
  if (rest.length === 0) return ` (${first})`;
  const shown = rest.slice(-REASON_TAIL_LINES);
  const skipped = rest.length - shown.length;
  const more = skipped === 0 ? [] : [`  │ … ${skipped} earlier lines (--format json has them all)`];
  return ` (${first})\n${[...more, ...shown.map((line) => `  │ ${line}`)].join("\n")}`;
}

function firstLine(text: string): string {
  const line = text.split("\n")[0] ?? "";
  return line.length > 60 ? `${line.slice(0, 57)}...` : line;
}

function attemptNote(attempt: unknown): string {
  return typeof attempt === "number" && attempt > 1 ? `, attempt ${attempt}` : "";
}

/** `, visit 2` for a node entered again (its first visit goes unsaid). */
function visitNote(visit: unknown): string {
  return typeof visit === "number" && visit > 1 ? `, visit ${visit}` : "";
}

function formatMs(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}
