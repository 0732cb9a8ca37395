import { esc } from "../ui/view/html.js";
import { NODE_KINDS } from "./workflow-draft.js";

/** What the editor page's script reads from its `data-` attributes. */
export interface EditorPageOptions {
  path: string;
  /** The file's API path (GET opens, PUT saves). */
  fileApi: string;
  validateApi: string;
  listPath: string;
  csrf: string;
  saves: "file" | "pull-request";
  viewer: string;
}

const KEYS = [
  ["N", "add a node of the chosen kind"],
  ["Tab", "select the next node or edge"],
  ["Arrows", "move the selected node"],
  ["C, then a node's number", "connect the selected node to it"],
  ["Delete", "delete the selection"],
  ["Ctrl+Z / Ctrl+Y", "undo / redo"],
  ["Ctrl+S", "save"],
] as const;

/**
 * The editor page: a toolbar, the SVG canvas, the side panel and the findings list. The script
 * (`/ui-assets/editor/editor.js`, bundled with the validator) fills them; nothing runs inline.
 */
export function renderEditorPage(options: EditorPageOptions): string {
  const data = [
    ["path", options.path],
    ["file-api", options.fileApi],
    ["validate-api", options.validateApi],
    ["csrf", options.csrf],
    ["saves", options.saves],
  ]
    .map(([name, value]) => ` data-${name}="${esc(value)}"`)
    .join("");
  const kinds = NODE_KINDS.map((kind) => `<option value="${kind}">${kind}</option>`).join("");
  const save = options.saves === "file" ? "Save" : "Propose as pull request";
  const keys = KEYS.map(([key, what]) => `<li><kbd>${esc(key)}</kbd> ${esc(what)}</li>`).join("");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(options.path)} · ClusterCode editor</title>
<link rel="stylesheet" href="/ui-assets/run-pages.css"><link rel="stylesheet" href="/ui-assets/editor.css">
<script type="module" src="/ui-assets/editor/editor.js"></script></head>
<body${data}><div class="editor">
<header class="toolbar"><a href="${esc(options.listPath)}">Workflows</a> <b>${esc(options.path)}</b>
<label>Kind <select id="kind" aria-label="node kind">${kinds}</select></label>
<button id="add-node" type="button">Add node</button>
<button id="layout" type="button">Lay out</button>
<button id="undo" type="button">Undo</button><button id="redo" type="button">Redo</button>
<button id="save" type="button">${esc(save)}</button>
<span id="status" role="status"></span><span class="viewer">${esc(options.viewer)}</span></header>
<section class="canvas" id="canvas" tabindex="0" aria-label="workflow canvas"></section>
<aside class="panel" id="panel" aria-label="fields"></aside>
<section class="findings"><h2>Findings</h2><ul id="findings"></ul>
<details><summary>Keys</summary><ul class="keys">${keys}</ul></details></section>
</div></body></html>
`;
}

/** The list of a repository's (or the local) workflows, each linking to its editor. */
export function renderWorkflowList(title: string, paths: string[], listPath: string): string {
  const items = paths
    .map((path) => `<li><a href="${esc(`${listPath}/${path}/edit`)}">${esc(path)}</a></li>`)
    .join("");
  const fresh = `${listPath}/.clustercode/workflows/new-workflow.yml/edit`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title><link rel="stylesheet" href="/ui-assets/run-pages.css"></head>
<body><main><h1>${esc(title)}</h1><ul class="workflows">${items === "" ? "<li>No workflow yet.</li>" : items}</ul>
<p>Start one: <a href="${esc(fresh)}">.clustercode/workflows/new-workflow.yml</a> (or open any <code>.clustercode/workflows/NAME.yml/edit</code>).</p></main></body></html>
`;
}
