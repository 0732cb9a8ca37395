import type { RunDefinition, RunSnapshot } from "../../engine/model.js";
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
 * The status comment of a run: a marker, the state, a Mermaid graph with the active node and
 * counts, a table of the nodes visited so far, and links. A pure function of the run.
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
    "| # | node | attempt | outcome | reason |",
    "|---|---|---|---|---|",
    ...state.visits.map(
      (visit, index) =>
        `| ${index + 1} | ${cell(workflow.nodes[visit.node]?.title ?? visit.node)} | ${visit.attempt} | ${cell(visit.outcome ?? "…")} | ${cell(plainText(firstLine(visit.reason ?? toldWhy(visit.fedBack))))} |`,
    ),
    "",
    `Branch \`${state.branch}\`` +
      (links.pullRequestUrl === undefined ? "" : ` · [pull request](${links.pullRequestUrl})`) +
      (links.checkRunUrl === undefined ? "" : ` · [check run](${links.checkRunUrl})`) +
      (links.runPageUrl === undefined ? "" : ` · [run page](${links.runPageUrl})`) +
      ` · cost $${state.costUsd.toFixed(2)}`,
  ];
  return truncateText(lines.join("\n"));
}

/** A visit without a reason of its own says why it was entered again (its latest news). */
function toldWhy(fedBack: readonly string[] | undefined): string {
  const latest = fedBack?.at(-1);
  if (latest === undefined) return "";
  const more = fedBack !== undefined && fedBack.length > 1 ? ` (+${fedBack.length - 1} more)` : "";
  return `told: ${latest}${more}`;
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
