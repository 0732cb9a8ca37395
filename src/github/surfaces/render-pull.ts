import type { RunDefinition, RunSnapshot } from "../../engine/model.js";
import { cell, firstLine, truncateText } from "../client/limits.js";
import { codeText, plainText } from "./plain-text.js";

/** What a run's commits change against its base: per file and in all. */
export interface Diffstat {
  files: { filename: string; additions: number; deletions: number }[];
  additions: number;
  deletions: number;
  /** How many files changed in all (the listing may hold fewer). */
  changed: number;
}

/** How many files the body lists before it says how many more. */
const MAX_FILES = 30;

/**
 * The body of a run's pull request: which run, what its nodes did (outcome, verdict, reason),
 * and what its commits change (diffstat). Edited in place as the run goes on. A pure function.
 */
export function renderPullBody(
  definition: RunDefinition,
  state: RunSnapshot,
  issue: number,
  diffstat: Diffstat | undefined,
): string {
  const { workflow } = definition;
  const lines = [
    `Run \`${state.runId}\` of workflow \`${workflow.name}\` for #${issue}: **${state.status}**${state.lastSha === undefined ? "" : ` at ${state.lastSha.slice(0, 12)}`}.`,
    "",
    "Answer approvals with a review or `/approve`. A review requesting changes, or `/rework <what to change>`, sends a finished run back to work.",
    "",
    "#### Nodes",
    "",
    "| # | node | outcome | verdict | reason |",
    "|---|---|---|---|---|",
    ...state.visits.map(
      (visit, index) =>
        `| ${index + 1} | ${cell(workflow.nodes[visit.node]?.title ?? visit.node)} | ${cell(visit.outcome ?? "…")} | ${cell(visit.label ?? "")} | ${cell(plainText(firstLine(visit.reason ?? "")))} |`,
    ),
    "",
    "#### Changes",
    "",
    ...renderDiffstat(diffstat),
  ];
  return truncateText(lines.join("\n"));
}

function renderDiffstat(diffstat: Diffstat | undefined): string[] {
  if (diffstat === undefined) return ["Not known yet."];
  const total = `${diffstat.changed} file${diffstat.changed === 1 ? "" : "s"} changed, +${diffstat.additions} −${diffstat.deletions}`;
  const listed = diffstat.files.slice(0, MAX_FILES);
  const more = diffstat.changed - listed.length;
  return [
    total,
    "",
    ...listed.map(
      (file) => `- \`${cell(codeText(file.filename))}\` +${file.additions} −${file.deletions}`,
    ),
    ...(more > 0 ? [`- … and ${more} more`] : []),
  ];
}
