/**
 * Writes `workflows-schema/workflow.schema.json` from the zod schema: `npm run schema`.
 * A test fails when the committed file differs from what this writes.
 */
import { writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { renderJsonSchema } from "./json-schema.js";

const target = new URL("../../workflows-schema/workflow.schema.json", import.meta.url);
await writeFile(target, renderJsonSchema());
process.stdout.write(`wrote ${fileURLToPath(target)}\n`);
