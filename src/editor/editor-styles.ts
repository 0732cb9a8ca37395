/** The editor's stylesheet, served as `/ui-assets/editor.css` beside the run pages' own. */
export const EDITOR_CSS = `
.editor { display: grid; grid-template-columns: 1fr 340px; grid-template-rows: auto 1fr auto; height: 100vh; }
.toolbar { grid-column: 1 / 3; display: flex; gap: 8px; align-items: center; padding: 8px 12px; border-bottom: 1px solid var(--line); flex-wrap: wrap; }
.toolbar .viewer { margin-left: auto; color: var(--muted); }
#status[data-ok="false"] { color: var(--bad); font-weight: 600; } #status[data-ok="true"] { color: var(--ok); }
.canvas { overflow: auto; background: var(--bg); outline: none; }
.canvas:focus-visible { box-shadow: inset 0 0 0 2px var(--accent); }
.panel { border-left: 1px solid var(--line); padding: 8px 12px; overflow: auto; }
.panel label { display: block; margin: 8px 0 2px; font-weight: 600; }
.panel .help { color: var(--muted); font-size: 12px; margin: 0 0 4px; }
.panel input, .panel select, .panel textarea { width: 100%; font: 13px ui-monospace, Menlo, monospace; }
.panel textarea { min-height: 48px; }
.findings { grid-column: 1 / 3; border-top: 1px solid var(--line); padding: 0 12px; max-height: 28vh; overflow: auto; }
.findings li.error { color: var(--bad); } .findings li.warning { color: var(--warn); }
.findings li { cursor: pointer; }
svg.draw .node rect { fill: #fff; stroke: #8c959f; stroke-width: 1.5; }
svg.draw .node.kind-decision rect, svg.draw .node.kind-approval rect { fill: #fff8f0; }
svg.draw .node.kind-loop rect { fill: #f0f7ff; } svg.draw .node.kind-prototype rect { fill: #f5f0ff; }
svg.draw .terminal ellipse { fill: #fff; stroke: #8c959f; }
svg.draw .selected rect, svg.draw .selected ellipse { stroke: var(--accent); stroke-width: 3; }
svg.draw .node:focus { outline: none; } svg.draw .node:focus rect { stroke: var(--accent); stroke-dasharray: 4 2; }
svg.draw .has-error rect, svg.draw .edge.has-error path { stroke: var(--bad); stroke-width: 3; }
svg.draw .has-warning rect { stroke: var(--warn); stroke-width: 3; }
svg.draw text { font-size: 13px; text-anchor: middle; fill: var(--ink); pointer-events: none; }
svg.draw text.meta { font-size: 11px; fill: var(--muted); }
svg.draw .edge path { fill: none; stroke: #57606a; stroke-width: 1.5; }
svg.draw .edge .hit { stroke: transparent; stroke-width: 12; cursor: pointer; }
svg.draw .edge.back path.line { stroke-dasharray: 6 4; }
svg.draw .edge.selected path.line { stroke: var(--accent); stroke-width: 3; }
svg.draw .edge text { font-size: 11px; text-anchor: start; }
svg.draw .port { fill: var(--accent); cursor: crosshair; }
svg.draw .wire { stroke: var(--accent); stroke-dasharray: 4 3; fill: none; pointer-events: none; }
svg.draw .finding-badge { fill: var(--bad); }
`;
