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
.approval { border: 2px solid var(--warn); background: #fff8c5; border-radius: 8px; padding: 4px 16px 8px; margin: 16px 0; }
.approval h2 { border: 0; }
button.answer { font: inherit; padding: 6px 16px; border-radius: 6px; border: 1px solid var(--line); cursor: pointer; }
button.approve { background: var(--ok); color: #fff; } button.reject { background: #fff; color: var(--bad); }
button:disabled { opacity: .5; cursor: default; }
.answer-result[data-ok="false"] { color: var(--bad); font-weight: 600; }
.graph-box { overflow-x: auto; }
svg.graph rect, svg.graph ellipse { fill: #fff; stroke: #8c959f; stroke-width: 1.5; }
svg.graph .state-succeeded rect, .swatch.state-succeeded { fill: #dafbe1; stroke: var(--ok); background: #dafbe1; border-color: var(--ok); }
svg.graph .state-failed rect, .swatch.state-failed { fill: #ffebe9; stroke: var(--bad); stroke-width: 3; background: #ffebe9; border-color: var(--bad); }
svg.graph .state-cancelled rect { fill: #eaeef2; stroke: #6e7781; }
svg.graph .state-running rect, .swatch.state-running { fill: #ddf4ff; stroke: var(--accent); stroke-width: 3; background: #ddf4ff; border-color: var(--accent); }
svg.graph .state-waiting rect, .swatch.state-waiting { fill: #fff8c5; stroke: var(--warn); stroke-width: 3; background: #fff8c5; border-color: var(--warn); }
svg.graph .state-not-reached rect { fill: #fff; stroke: #d1d9e0; stroke-dasharray: 4 3; }
svg.graph .state-not-reached text { fill: var(--muted); }
.swatch { display: inline-block; padding: 0 8px; border: 1px solid var(--line); border-radius: 10px; font-size: 12px; }
.swatch.state-not-reached { border-style: dashed; color: var(--muted); }
.legend { color: var(--muted); font-size: 12px; }
svg.graph .terminal.reached ellipse { fill: #ddf4ff; stroke: var(--accent); stroke-width: 3; }
svg.graph text { text-anchor: middle; font-size: 13px; fill: var(--ink); }
svg.graph text.meta { font-size: 11px; fill: var(--muted); }
svg.graph .edge path { fill: none; stroke: #afb8c1; stroke-width: 1.3; }
svg.graph .edge.taken path { stroke: var(--accent); stroke-width: 2.6; }
svg.graph .edge.back path { stroke-dasharray: 5 4; }
svg.graph marker path { fill: #afb8c1; } svg.graph #arrow-taken path { fill: var(--accent); }
svg.graph text.edge-label { font-size: 11px; fill: var(--muted); text-anchor: start; }
svg.graph .edge.taken text.edge-label { fill: var(--accent); font-weight: 600; }
tr.state-failed td.state { color: var(--bad); font-weight: 600; } tr.state-succeeded td.state { color: var(--ok); }
tr.state-running td, tr.state-waiting td { font-weight: 600; } tr.state-not-reached td { color: var(--muted); }
details.visit.state-failed { border-color: var(--bad); border-width: 2px; }
.live-log pre.output { min-height: 3em; }
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
