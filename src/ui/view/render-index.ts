import { esc, usd, utc } from "./html.js";
import type { RunListView } from "./run-view.js";

/** An index of runs: each with its status, active node, branch and cost, linking to its page. */
export function renderIndexPage(list: RunListView): string {
  const rows = list.runs
    .map(
      (run) =>
        `<tr><td><a href="${esc(run.page)}"><code>${esc(run.runId)}</code></a></td><td>${esc(run.workflow)}</td><td class="status status-${esc(run.status)}">${esc(run.status)}</td><td>${esc(run.activeNode ?? "")}</td><td><code>${esc(run.branch)}</code></td><td>${esc(usd(run.costUsd))}</td><td>${esc(utc(run.updatedAt))}</td></tr>`,
    )
    .join("");
  return `<header><h1>${esc(list.title)}</h1></header><section>${list.runs.length === 0 ? "<p>No runs yet.</p>" : `<table class="runs"><thead><tr><th>run</th><th>workflow</th><th>status</th><th>at</th><th>branch</th><th>cost</th><th>updated</th></tr></thead><tbody>${rows}</tbody></table>`}</section>${renderJudges(list.judges)}`;
}

const percent = (share: number) => `${(share * 100).toFixed(0)} %`;

/** The judge scorecard of the listed runs; nothing when no judge gave a verdict. */
function renderJudges(judges: RunListView["judges"]): string {
  if (judges.length === 0) return "";
  const rows = judges
    .map(
      (row) =>
        `<tr><td>${esc(row.provider)}</td><td><code>${esc(row.model)}</code></td><td>${row.verdicts}</td><td>${row.overturned}</td><td>${percent(row.overturnRate)}</td><td>${percent(row.independentShare)}</td></tr>`,
    )
    .join("");
  return `<section class="judges"><h2>Judges</h2><p>Verdicts of these runs' judges, and how often what followed overturned them (a rejection at the next approval, a gate or CI failing on the judged commit, the pull request closed unmerged, a retry past it).</p><table class="runs"><thead><tr><th>provider</th><th>model</th><th>verdicts</th><th>overturned</th><th>overturn rate</th><th>independent</th></tr></thead><tbody>${rows}</tbody></table></section>`;
}
