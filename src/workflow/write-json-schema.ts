/**
 * Writes `workflows-schema/workflow.schema.json` from the zod schema, and the field reference
 * in docs/workflow-language.md from it: `npm run schema`. Tests fail when a committed file
 * differs from what this writes.
 */
import { readFile, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { withFieldReference } from "./field-reference.js";
import { renderJsonSchema } from "./json-schema.js";

const target = new URL("../../workflows-schema/workflow.schema.json", import.meta.url);
await writeFile(target, renderJsonSchema());
process.stdout.write(`wrote ${fileURLToPath(target)}\n`);

// Formatted as `npm run lint` checks docs (prettier is a development dependency, as this is).
const { format, resolveConfig } = await import("prettier");
const doc = new URL("../../docs/workflow-language.md", import.meta.url);
const filepath = fileURLToPath(doc);
const text = withFieldReference(await readFile(doc, "utf8"));
await writeFile(doc, await format(text, { ...(await resolveConfig(filepath)), filepath }));
process.stdout.write(`wrote ${fileURLToPath(doc)}\n`);
