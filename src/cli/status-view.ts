import type { RunSnapshot } from "../engine/model.js";
import { terminalText } from "./terminal-text.js";

/** One run as `status` lists it: the columns, and why it stands where it does. */
export interface StatusRow {
  state: RunSnapshot;
  workflow: string;
  /** Where it stands as a person reads it (`interrupted` when no process drives it). */
  shown: string;
}

const HEADER = ["RUN", "WORKFLOW", "STATUS", "STARTED", "DURATION", "BRANCH"];

/** The runs as a table with a header (the list of a repository's runs). */
export function statusTable(rows: StatusRow[], now: number): string {
  const cells = [HEADER, ...rows.map((row) => columns(row, now))];
  const widths = HEADER.map((_, column) =>
    Math.max(...cells.map((line) => line[column]?.length ?? 0)),
  );
  return cells
    .map((line, index) => {
      const text = line.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join("  ");
      const why = index === 0 ? undefined : whyOf(rows[index - 1]?.state);
      return `${why === undefined ? text.trimEnd() : `${text}  (${why})`}\n`;
    })
    .join("");
}

/**
 * One run in detail: its line, then each attempt at a node: which visit of the node it belongs
 * to (numbered per node) and its attempt within that visit (a retry is the visit's next attempt).
 */
export function statusDetail(row: StatusRow, now: number): string {
  const { state, shown } = row;
  const why = whyOf(state);
  const lines = [`${columns(row, now).join("  ")}${why === undefined ? "" : `  (${why})`}`];
  const seen = new Map<string, number>();
  for (const [index, visit] of state.visits.entries()) {
    const before = seen.get(visit.node) ?? 0;
    const number = visit.attempt > 1 ? Math.max(before, 1) : before + 1;
    seen.set(visit.node, number);
    const outcome =
      visit.outcome ?? (shown === "interrupted" ? shown : openVisitState(state, index));
    const took = duration((visit.endedAt ?? now) - visit.startedAt);
    lines.push(
      `  ${visit.node.padEnd(20)} visit ${number}  attempt ${visit.attempt}  ${outcome.padEnd(17)} ${took.padStart(7)}${visit.label === undefined || visit.label === outcome ? "" : `  → ${visit.label}`}`,
    );
  }
  if (shown === "interrupted") {
    lines.push(`its process stopped; continue it with: clustercode resume ${state.runId}`);
  }
  return lines.map((line) => `${line}\n`).join("");
}

function columns(row: StatusRow, now: number): string[] {
  const { state } = row;
  const end = row.shown === "running" || row.shown === "queued" ? now : state.updatedAt;
  return [
    state.runId,
    row.workflow,
    row.shown,
    startedAt(state.startedAt),
    duration(end - state.startedAt),
    state.branch,
  ];
}

/** A run's start in local time, to the minute (`2026-12-07 05:40`). */
function startedAt(at: number): string {
  const date = new Date(at);
  const two = (value: number) => String(value).padStart(2, "0");
  return `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())} ${two(date.getHours())}:${two(date.getMinutes())}`;
}

/** A duration as a person reads it: `850ms`, `12s`, `3m 05s`, `2h 03m`. */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  const seconds = Math.floor(ms / 1000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ${String(seconds % 60).padStart(2, "0")}s`;
  return `${Math.floor(minutes / 60)}h ${String(minutes % 60).padStart(2, "0")}m`;
}

/** Why a run stands where it does, in a few words. */
function whyOf(state: RunSnapshot | undefined): string | undefined {
  if (state === undefined) return undefined;
  if (state.reason !== undefined) return terminalText(state.reason.split("\n")[0] ?? "");
  switch (state.awaiting?.kind) {
    case "approval":
      return `waiting for approval of ${state.awaiting.node}`;
    case "lost":
      return `${state.awaiting.node} was lost: waiting for retry or resolve`;
    case undefined:
      return undefined;
  }
}

/** The state of the visit at `index` that has no outcome yet. */
function openVisitState(state: RunSnapshot, index: number): string {
  if (state.active?.visit !== index) return "running";
  return state.awaiting?.kind === "approval" ? "awaiting approval" : "running";
}
