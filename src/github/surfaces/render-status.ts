import type { RunDefinition, RunSnapshot } from "../../engine/model.js";
import { nodeStates, takenEdges, visitState, type NodeState } from "../../engine/node-states.js";
import { visitReason } from "../../engine/visit-reasons.js";
import { duration } from "../../ui/view/html.js";
import { renderMermaid } from "../../workflow/mermaid.js";
import { cell, firstLine, truncateText } from "../client/limits.js";
import { plainText } from "./plain-text.js";

/** The hidden marker that finds a run's status comment again after a crash. */
export function statusMarker(runId: string): string {
  return `<!-- clustercode:run:${runId} -->`;
}

/** What the status comment links to and where a queued run stands. */
export interface StatusLinks {
  pullRequestUrl?: string;
  checkRunUrl?: string;
  /** The run's page, when the app serves run pages. */
  runPageUrl?: string;
  /** 1-based place in the admission queue, for a queued run. */
  queuePosition?: number;
  /** What the DevBox executor last said about the run's DevBox (waiting for capacity...). */
  devboxNotice?: string;
}

/** Visits shown in the open table; earlier ones fold away, so the comment fits about a screen. */
export const VISIBLE_VISITS = 6;

const STATE_MARKS: Record<NodeState, string> = {
  succeeded: "✅",
  failed: "❌",
  cancelled: "⛔",
  running: "🔄",
  waiting: "✋",
  "not-reached": "",
};

const STATUS_WORDS: Record<RunSnapshot["status"], string> = {
  queued: "⏳ queued",
  running: "🔄 running",
  awaiting_input: "✋ awaiting input",
  succeeded: "✅ succeeded",
  failed: "❌ failed",
  cancelled: "⛔ cancelled",
  escalated: "⚠️ escalated",
};

/**
 * The status comment of a run: a marker, the state, a Mermaid graph with each node coloured by
 * its state and the path taken drawn heavier, a table of the latest visits (node, visit number,
 * outcome, time, reason; earlier visits folded), and links. A pure function of the run.
 */
export function renderStatusComment(
  definition: RunDefinition,
  state: RunSnapshot,
  links: StatusLinks = {},
): string {
  const { workflow } = definition;
  const visits: Record<string, number> = {};
  for (const visit of state.visits) visits[visit.node] = (visits[visit.node] ?? 0) + 1;
  const traversals: Record<number, number> = {};
  for (const [edge, count] of Object.entries(state.traversals)) traversals[Number(edge)] = count;
  const graph = renderMermaid(workflow, {
    ...(state.active === undefined ? {} : { active: state.active.node }),
    visits,
    traversals,
    states: nodeStates(workflow, state),
    taken: takenEdges(workflow, state),
  });
  const lines = [
    statusMarker(state.runId),
    `### ClusterCode run \`${state.runId}\` · ${workflow.name}: ${STATUS_WORDS[state.status]}` +
      (state.reworkRounds === undefined ? "" : ` · rework round ${state.reworkRounds}`),
    "",
    ...headline(state, links),
    "",
    "```mermaid",
    graph.trimEnd(),
    "```",
    "",
    ...visitTables(definition, state),
    `Branch \`${state.branch}\`` +
      (links.pullRequestUrl === undefined ? "" : ` · [pull request](${links.pullRequestUrl})`) +
      (links.checkRunUrl === undefined ? "" : ` · [check run](${links.checkRunUrl})`) +
      (links.runPageUrl === undefined ? "" : ` · [run page](${links.runPageUrl})`) +
      ` · cost $${state.costUsd.toFixed(2)}`,
  ];
  return truncateText(lines.join("\n"));
}

/** The latest visits as a table, the earlier ones folded in a `<details>` above it. */
function visitTables(definition: RunDefinition, state: RunSnapshot): string[] {
  const rows = visitRows(definition, state);
  const folded = rows.slice(0, Math.max(0, rows.length - VISIBLE_VISITS));
  const shown = rows.slice(folded.length);
  const header = ["| # | node | visit | outcome | time | reason |", "|---|---|---|---|---|---|"];
  const earlier =
    folded.length === 0
      ? []
      : [
          `<details><summary>${folded.length} earlier visit${folded.length === 1 ? "" : "s"}</summary>`,
          "",
          ...header,
          ...folded,
          "",
          "</details>",
          "",
        ];
  return [...earlier, ...header, ...shown, ""];
}

/** One row per visit: the node's visit number (and attempt), outcome, time taken and why. */
function visitRows(definition: RunDefinition, state: RunSnapshot): string[] {
  const { workflow } = definition;
  const seen: Record<string, number> = {};
  return state.visits.map((visit, index) => {
    const number = (seen[visit.node] = (seen[visit.node] ?? 0) + 1);
    const attempt = visit.attempt > 1 ? ` (attempt ${visit.attempt})` : "";
    const mark = STATE_MARKS[visitState(workflow, state, visit)];
    const outcome = `${mark} ${visit.outcome ?? "…"}`.trim();
    const time = visit.endedAt === undefined ? "…" : duration(visit.endedAt - visit.startedAt);
    const reason = plainText(firstLine(visitReason(state, index) ?? ""));
    return `| ${index + 1} | ${cell(workflow.nodes[visit.node]?.title ?? visit.node)} | ${number}${attempt} | ${cell(outcome)} | ${time} | ${cell(reason)} |`;
  });
}

function headline(state: RunSnapshot, links: StatusLinks): string[] {
  if (state.status === "queued") {
    const place = links.queuePosition === undefined ? "" : ` at position ${links.queuePosition}`;
    return [`Waiting in the admission queue${place}; it starts when a slot frees up.`];
  }
  if (state.awaiting?.kind === "approval") {
    const deadline = new Date(state.awaiting.deadline).toISOString();
    return [
      `Waiting on **${state.awaiting.node}**: answer with \`/approve [note]\` or \`/reject [reason]\` (until ${deadline}).`,
    ];
  }
  if (state.awaiting?.kind === "lost") {
    return [
      `The DevBox of **${state.awaiting.node}** was lost mid-command: check the real world, then \`/retry\` or \`/resolve succeeded|failed\`.`,
    ];
  }
  if (state.active !== undefined) {
    const notice = links.devboxNotice === undefined ? "" : ` DevBox: ${links.devboxNotice}.`;
    return [`Active node: **${state.active.node}**.${notice}`];
  }
  return state.reason === undefined ? [] : [`Reason: ${plainText(firstLine(state.reason))}`];
}
