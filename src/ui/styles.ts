/** The run pages' stylesheet, served as `/ui-assets/run-pages.css` (no CDN, no build step). */
export const RUN_PAGES_CSS = `
:root { color-scheme: light; --ink: #1f2328; --muted: #59636e; --line: #d1d9e0; --accent: #0969da;
  --ok: #1a7f37; --bad: #cf222e; --warn: #9a6700; --bg: #f6f8fa; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.5 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: var(--ink); background: #fff; }
main { max-width: 1100px; margin: 0 auto; padding: 16px 24px 48px; }
a { color: var(--accent); text-decoration: none; } a:hover { text-decoration: underline; }
h1 { font-size: 22px; margin: 8px 0; } h2 { font-size: 17px; margin: 24px 0 8px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
h3 { font-size: 15px; margin: 8px 0; }
code { font: 12px ui-monospace, SFMono-Regular, Menlo, monospace; background: var(--bg); padding: 1px 4px; border-radius: 4px; }
pre.output { font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; background: #0d1117; color: #e6edf3; padding: 8px; border-radius: 6px; max-height: 260px; overflow: auto; white-space: pre-wrap; }
.crumbs, .meta, .brief { color: var(--muted); margin: 2px 0; }
.status { font-size: 13px; padding: 2px 10px; border-radius: 12px; border: 1px solid var(--line); vertical-align: middle; }
.status-running, .status-queued { background: #ddf4ff; } .status-awaiting_input { background: #fff8c5; }
.status-succeeded { background: #dafbe1; } .status-failed, .status-cancelled { background: #ffebe9; } .status-escalated { background: #fff1e5; }
table { border-collapse: collapse; width: 100%; } th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
tr.active td { font-weight: 600; } tr.pending td { color: var(--muted); }
.approval { border: 2px solid var(--warn); background: #fff8c5; border-radius: 8px; padding: 4px 16px 8px; margin: 16px 0; }
.approval h2 { border: 0; }
button.answer { font: inherit; padding: 6px 16px; border-radius: 6px; border: 1px solid var(--line); cursor: pointer; }
button.approve { background: var(--ok); color: #fff; } button.reject { background: #fff; color: var(--bad); }
button:disabled { opacity: .5; cursor: default; }
.answer-result[data-ok="false"] { color: var(--bad); font-weight: 600; }
.graph-box { overflow-x: auto; }
svg.graph rect, svg.graph ellipse { fill: #fff; stroke: #8c959f; stroke-width: 1.5; }
svg.graph .visited rect { fill: #dafbe1; stroke: var(--ok); }
svg.graph .active rect { fill: #fff8c5; stroke: var(--warn); stroke-width: 3; }
svg.graph .terminal.reached ellipse { fill: #ddf4ff; stroke: var(--accent); stroke-width: 3; }
svg.graph text { text-anchor: middle; font-size: 13px; fill: var(--ink); }
svg.graph text.meta { font-size: 11px; fill: var(--muted); }
svg.graph .edge path { fill: none; stroke: #8c959f; stroke-width: 1.3; }
svg.graph .edge.crossed path { stroke: var(--ok); stroke-width: 2; }
svg.graph .edge.back path { stroke-dasharray: 5 4; }
svg.graph marker path { fill: #8c959f; }
svg.graph text.edge-label { font-size: 11px; fill: var(--muted); text-anchor: start; paint-order: stroke; stroke: #fff; stroke-width: 3px; }
details.visit { border: 1px solid var(--line); border-radius: 6px; margin: 6px 0; padding: 4px 10px; }
details.visit > summary { cursor: pointer; } .kind { color: var(--muted); font-size: 12px; }
.n { display: inline-block; min-width: 22px; color: var(--muted); }
ol.evidence { padding-left: 18px; } ol.evidence li { margin: 4px 0; } .at { color: var(--muted); font-size: 12px; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 0 12px; margin: 4px 0; }
dt { color: var(--muted); } dd { margin: 0; white-space: pre-wrap; word-break: break-word; }
.stale { color: var(--warn); font-weight: 600; }
.fed-back { margin: 6px 0; padding: 4px 12px; border-left: 4px solid var(--warn); background: var(--bg); }
blockquote.reasoning { margin: 6px 0; padding: 4px 12px; border-left: 4px solid var(--accent); background: var(--bg); white-space: pre-wrap; }
.variants { display: grid; grid-template-columns: repeat(auto-fit, minmax(240px, 1fr)); gap: 12px; }
article.variant, article.iteration { border: 1px solid var(--line); border-radius: 8px; padding: 8px 12px; }
article.variant.result-won { border: 2px solid var(--ok); }
tr.pass td:last-child { color: var(--ok); } tr.fail td:last-child { color: var(--bad); font-weight: 600; }
progress { width: 160px; }
footer { max-width: 1100px; margin: 0 auto; padding: 0 24px 24px; color: var(--muted); }
`;
