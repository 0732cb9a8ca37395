/**
 * The workflow editor's script, bundled with the validator and elkjs into one module
 * (`npm run build`). The page's `data-` attributes say which file it edits and where to save.
 */
import schema from "../../../workflows-schema/workflow.schema.json" with { type: "json" };
import { SchemaFields } from "../schema-fields.js";
import type { OpenedWorkflow } from "../workflow-files.js";
import { Editor } from "./editor-state.js";
import { bindKeys } from "./keys.js";
import { bindPointer } from "./pointer.js";

const body = document.body;
const data = body.dataset;
const config = {
  fileApi: data.fileApi ?? "",
  validateApi: data.validateApi ?? "",
  csrf: data.csrf ?? "",
  saves: data.saves === "pull-request" ? ("pull-request" as const) : ("file" as const),
};

async function start(): Promise<void> {
  const answer = await fetch(config.fileApi, { headers: { accept: "application/json" } });
  const opened = (await answer.json()) as OpenedWorkflow & { message?: string };
  if (!answer.ok) {
    document.getElementById("status")!.textContent = opened.message ?? `HTTP ${answer.status}`;
    return;
  }
  const editor = new Editor(opened, new SchemaFields(schema), config);
  await editor.layoutMissing(opened.positions);
  bindPointer(editor);
  bindKeys(editor);
  editor.bindToolbar();
  editor.render({ panel: true });
  body.dataset.ready = "true";
}

void start();
