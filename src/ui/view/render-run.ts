import { renderGraphSvg } from "./graph-svg.js";
import { duration, esc, usd, utc } from "./html.js";
import type { ApprovalView, EvidenceLine, RunView, VisitView } from "./run-view.js";

/** Where the page lives, for links between a run page and its loop and prototype pages. */
export interface PagePaths {
  /** The run page's path, e.g. `/runs/<runId>` or `/runs/<owner>/<repo>/<runId>`. */
  run: string;
  /** The index of the runs the run is listed in. */
  index: string;
}

const STATUS_WORDS: Record<string, string> = {
  queued: "queued",
  running: "running",
  awaiting_input: "awaiting input",
  succeeded: "succeeded",
  failed: "failed",
  cancelled: "cancelled",
  escalated: "escalated",
};

/** The path of a visit's own page (a loop's iterations, a prototype's variants). */
export function visitPath(paths: PagePaths, visit: number): string {
  return `${paths.run}/visits/${visit}`;
}

/** The header every page of a run shares: run id, workflow, status, branch and links. */
export function renderRunHeader(view: RunView, paths: PagePaths): string {
  const links = [
    view.links.branch === undefined
      ? `branch <code>${esc(view.branch)}</code>`
      : `branch <a href="${esc(view.links.branch)}"><code>${esc(view.branch)}</code></a>`,
    view.links.pullRequest === undefined
      ? ""
      : `<a href="${esc(view.links.pullRequest)}">pull request</a>`,
    view.lastSha === undefined
      ? ""
      : view.links.commit === undefined
        ? `commit <code>${esc(view.lastSha.slice(0, 12))}</code>`
        : `commit <a href="${esc(view.links.commit)}"><code>${esc(view.lastSha.slice(0, 12))}</code></a>`,
  ].filter((part) => part !== "");
  return `<header><p class="crumbs"><a href="${esc(paths.index)}">runs</a> · ${esc(view.repo)}</p>
<h1><a href="${esc(paths.run)}">Run <code>${esc(view.runId)}</code></a> · ${esc(view.workflow)} <span class="status status-${esc(view.status)}" data-status="${esc(view.status)}">${esc(STATUS_WORDS[view.status] ?? view.status)}</span></h1>
<p class="brief">${esc(view.brief)}</p>
<p class="meta">${links.join(" · ")} · from <code>${esc(view.baseBranch)}</code>${view.startedBy === undefined ? "" : ` · started by ${esc(view.startedBy)}`} · started ${esc(utc(view.startedAt))}${view.activeNode === undefined ? "" : ` · at <strong class="active-node">${esc(view.activeNode)}</strong>`}${view.reason === undefined ? "" : ` · ${esc(view.reason)}`}</p></header>`;
}

/**
 * The run page's content: header, the approval waited on (with Approve / Reject), the graph
 * with the live position, spend against every budget, the nodes, and the timeline of visits
 * with each one's evidence. A pure function of the view; all text escaped.
 */
export function renderRunPage(view: RunView, paths: PagePaths): string {
  const failing = view.visits.findLast((visit) => visit.state === "failed")?.index;
  return [
    renderRunHeader(view, paths),
    view.approval === undefined ? "" : renderApproval(view.approval),
    `<section class="graph-box"><h2>Graph</h2>${renderGraphSvg(view.graph)}${LEGEND}</section>`,
    view.final ? "" : LIVE_LOG,
    renderBudgets(view),
    renderNodes(view),
    `<section class="timeline"><h2>Timeline</h2>${renderEvidence(view.runEvidence)}${view.visits
      .map((visit) => renderVisit(visit, paths, visit.index === failing))
      .join("")}</section>`,
  ].join("\n");
}

/** The node colours, named. */
const LEGEND = `<p class="legend">${["succeeded", "failed", "running", "waiting", "not-reached"]
  .map((state) => `<span class="swatch state-${state}">${state.replace("-", " ")}</span>`)
  .join(" ")} · the path taken is drawn heavier</p>`;

/** Where the script streams the running command's output (server-sent events). */
const LIVE_LOG = `<section class="live-log"><h2>Live output</h2><p class="live-state" role="status">Waiting for output…</p><pre class="output live" aria-live="polite"></pre></section>`;

/** The approval panel: what is being approved, by whom, until when, and the buttons. */
export function renderApproval(approval: ApprovalView): string {
  const who =
    approval.approvers.length === 0 ? "anyone with write access" : approval.approvers.join(", ");
  return `<section class="approval" data-visit="${approval.visit}"><h2>Waiting for approval of ${esc(approval.title)}</h2>
${approval.message === undefined ? "" : `<p class="message">${esc(approval.message)}</p>`}
<p>Who may answer: ${esc(who)}${approval.preventSelfApproval ? " (not the person who started the run)" : ""} · until ${esc(utc(approval.deadline))}</p>
<p><label>Note <input name="note" class="note" maxlength="500"></label></p>
<p><button type="button" class="answer approve" data-decision="approved">Approve</button> <button type="button" class="answer reject" data-decision="rejected">Reject</button></p>
<p class="answer-result" role="status"></p></section>`;
}

function renderBudgets(view: RunView): string {
  const rows = view.budgets
    .map((budget) => {
      const limit = budget.limitUsd === undefined ? "no limit" : usd(budget.limitUsd);
      const bar =
        budget.limitUsd === undefined || budget.limitUsd <= 0
          ? ""
          : `<progress max="${budget.limitUsd}" value="${Math.min(budget.spentUsd, budget.limitUsd)}"></progress>`;
      return `<tr><td>${esc(budget.name)}</td><td>${esc(usd(budget.spentUsd))}</td><td>${esc(limit)}</td><td>${bar}</td></tr>`;
    })
    .join("");
  return `<section class="budgets"><h2>Spend</h2><table><thead><tr><th>budget</th><th>spent</th><th>limit</th><th></th></tr></thead><tbody>${rows}</tbody></table></section>`;
}

function renderNodes(view: RunView): string {
  const rows = view.graph.nodes
    .map(
      (node) =>
        `<tr class="state-${esc(node.state)}"><td>${esc(node.title)}</td><td>${esc(node.kind)}</td><td class="state">${esc(node.state.replace("-", " "))}</td><td>${node.visits}</td><td>${node.durationMs === 0 ? "" : esc(duration(node.durationMs))}</td></tr>`,
    )
    .join("");
  return `<section class="nodes"><h2>Nodes</h2><table><thead><tr><th>node</th><th>kind</th><th>state</th><th>visits</th><th>time</th></tr></thead><tbody>${rows}</tbody></table></section>`;
}

function renderVisit(visit: VisitView, paths: PagePaths, failing: boolean): string {
  const detail =
    visit.loop !== undefined
      ? ` · <a class="open-visit" href="${esc(visitPath(paths, visit.index))}">${visit.loop.iterations.length} iteration(s) →</a>`
      : visit.prototype !== undefined
        ? ` · <a class="open-visit" href="${esc(visitPath(paths, visit.index))}">${visit.prototype.variants.length} variants →</a>`
        : "";
  const decision =
    visit.decision === undefined
      ? ""
      : `<p class="verdict">${esc(visit.decision.evaluator)} evaluator: <strong>${esc(visit.decision.verdict ?? visit.decision.error ?? "")}</strong>${visit.decision.exitCode === undefined ? "" : ` (exit code ${visit.decision.exitCode})`}${visit.decision.model === undefined ? "" : ` · ${esc(visit.decision.model)}`}${staleMark(visit.decision)}</p>${visit.decision.reasoning === undefined ? "" : `<blockquote class="reasoning">${esc(visit.decision.reasoning)}</blockquote>`}`;
  const fedBack =
    visit.fedBack === undefined
      ? ""
      : `<div class="fed-back"><h4>Told why it was entered again</h4><ul>${visit.fedBack.map((line) => `<li>${esc(line)}</li>`).join("")}</ul></div>`;
  const answer =
    visit.answer === undefined
      ? ""
      : `<p class="accepted">${esc(visit.answer.decision)} by <strong>${esc(visit.answer.actor)}</strong>${visit.answer.where === undefined ? "" : ` via ${esc(visit.answer.where)}`} at ${esc(utc(visit.answer.at))}${visit.answer.note === undefined ? "" : `: ${esc(visit.answer.note)}`}${staleMark(visit.answer)}</p>`;
  const open = visit.outcome === undefined || failing;
  const time =
    visit.endedAt === undefined
      ? `since ${utc(visit.startedAt).slice(11)}`
      : duration(visit.endedAt - visit.startedAt);
  return `<details class="visit kind-${esc(visit.kind)} state-${esc(visit.state)}" id="visit-${visit.index}"${open ? " open" : ""}><summary><span class="n">${visit.index + 1}</span> <strong>${esc(visit.title)}</strong> <span class="kind">${esc(visit.kind)}</span> attempt ${visit.attempt} · <span class="outcome">${esc(visit.outcome ?? "in progress")}</span>${visit.label === undefined || visit.label === visit.outcome ? "" : ` → ${esc(visit.label)}`} · <span class="time">${esc(time)}</span> · ${esc(usd(visit.costUsd))}${visit.commit === undefined ? "" : ` · commit <code>${esc(visit.commit.slice(0, 12))}</code>`}${detail}</summary>
${visit.reason === undefined ? "" : `<p class="reason">${esc(visit.reason)}</p>`}${fedBack}${decision}${answer}${renderEvidence(visit.evidence)}</details>`;
}

/** The commit a verdict or answer judged, and whether the branch moved after it. */
function staleMark(judged: { headSha?: string; stale?: boolean }): string {
  if (judged.headSha === undefined) return "";
  const sha = `<code>${esc(judged.headSha.slice(0, 12))}</code>`;
  return judged.stale === true
    ? ` · <span class="stale">stale: judged ${sha}, the branch moved since</span>`
    : ` · on ${sha}`;
}

/** Evidence lines as a list: summary, facts, and any output tail in a preformatted block. */
export function renderEvidence(lines: readonly EvidenceLine[]): string {
  if (lines.length === 0) return "";
  return `<ol class="evidence">${lines
    .map(
      (line) =>
        `<li data-kind="${esc(line.kind)}"><span class="at">${esc(utc(line.at).slice(11))}</span> ${esc(line.summary)}${line.facts.length === 0 ? "" : `<dl>${line.facts.map((fact) => `<dt>${esc(fact.label)}</dt><dd>${esc(fact.value)}</dd>`).join("")}</dl>`}${line.output === undefined ? "" : `<pre class="output">${esc(line.output)}</pre>`}</li>`,
    )
    .join("")}</ol>`;
}
