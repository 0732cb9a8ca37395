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
  return `<header><h1>${esc(list.title)}</h1></header><section>${list.runs.length === 0 ? "<p>No runs yet.</p>" : `<table class="runs"><thead><tr><th>run</th><th>workflow</th><th>status</th><th>at</th><th>branch</th><th>cost</th><th>updated</th></tr></thead><tbody>${rows}</tbody></table>`}</section>`;
}
