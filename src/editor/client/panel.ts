import { stringify } from "yaml";
import { esc } from "../../ui/view/html.js";
import type { FieldSpec, SchemaFields } from "../schema-fields.js";
import type { WorkflowDraft } from "../workflow-draft.js";
import { TERMINALS } from "../../workflow/graph.js";
import type { Selection } from "./canvas.js";

/**
 * The side panel's HTML for the selection: a node's id and every field of its kind, an edge's
 * label, back-edge mark and cap, or (nothing selected) the workflow's own fields. Each field
 * carries the schema's description and, for enums, its choices.
 */
export function renderPanel(
  draft: WorkflowDraft,
  selection: Selection,
  schema: SchemaFields,
): string {
  if (selection?.kind === "node") {
    const node = draft.nodes().find((candidate) => candidate.id === selection.id);
    if (node === undefined) return workflowPanel(draft, schema);
    const values = draft.nodeFields(node.id);
    const targets = [...draft.nodes().map((other) => other.id), ...TERMINALS]
      .map((id) => `<option value="${esc(id)}">${esc(id)}</option>`)
      .join("");
    return `<h2>Node <code>${esc(node.id)}</code> · ${esc(node.kind)}</h2>
<label for="field-id">id</label><p class="help">The node's name: lower-case letters, digits, - and _. Edges follow a rename.</p>
<input id="field-id" data-role="rename" value="${esc(node.id)}" autocomplete="off">
${schema
  .node(node.kind)
  .map((field) => fieldHtml(field, values[field.key]))
  .join("\n")}
<label for="connect-to">Connect to</label><p class="help">Adds an edge from this node (or drag from its bottom handle).</p>
<select id="connect-to">${targets}</select> <button type="button" id="connect">Connect</button>
<p><button type="button" id="delete">Delete node</button></p>`;
  }
  if (selection?.kind === "edge") {
    const edge = draft.edges().find((candidate) => candidate.index === selection.index);
    if (edge === undefined) return workflowPanel(draft, schema);
    const values: Record<string, unknown> = {
      label: edge.label,
      back: edge.back ? true : undefined,
      max_traversals: edge.maxTraversals,
    };
    return `<h2>Edge <code>${esc(edge.from)}</code> → <code>${esc(edge.to)}</code></h2>
${schema
  .edge()
  .map((field) => fieldHtml(field, values[field.key]))
  .join("\n")}
<p><button type="button" id="delete">Delete edge</button></p>`;
  }
  return workflowPanel(draft, schema);
}

function workflowPanel(draft: WorkflowDraft, schema: SchemaFields): string {
  const fields = schema.workflow().map((field) => fieldHtml(field, draft.topField(field.key)));
  return `<h2>Workflow</h2><p class="help">Select a node or an edge to edit it; these are the workflow's own fields.</p>\n${fields.join("\n")}`;
}

function fieldHtml(field: FieldSpec, value: unknown): string {
  const id = `field-${field.key}`;
  const attributes = `id="${id}" data-key="${esc(field.key)}" data-control="${field.control}"`;
  const label = `<label for="${id}">${esc(field.key)}${field.required ? " *" : ""}</label><p class="help">${esc(field.description)}</p>`;
  switch (field.control) {
    case "select":
    case "boolean": {
      const choices = field.control === "boolean" ? ["true", "false"] : (field.options ?? []);
      const options = ["", ...choices]
        .map(
          (choice) =>
            `<option value="${esc(choice)}"${scalarText(value) === choice ? " selected" : ""}>${esc(choice === "" ? "(unset)" : choice)}</option>`,
        )
        .join("");
      return `${label}<select ${attributes}>${options}</select>`;
    }
    case "number":
      return `${label}<input type="number" ${attributes} value="${esc(scalarText(value))}">`;
    case "text":
      return `${label}<input ${attributes} value="${esc(scalarText(value))}" autocomplete="off">`;
    case "textarea":
      return `${label}<textarea ${attributes}>${esc(typeof value === "string" ? value : "")}</textarea>`;
    case "yaml": {
      const text =
        value === undefined || value === null
          ? ""
          : stringify(value, { collectionStyle: "flow" }).trim();
      return `${label}<textarea ${attributes} placeholder="YAML">${esc(text)}</textarea>`;
    }
  }
}

function scalarText(value: unknown): string {
  return typeof value === "string" || typeof value === "number" || typeof value === "boolean"
    ? String(value)
    : "";
}
