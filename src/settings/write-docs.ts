/**
 * Writes docs/configuration.md from the settings schema: `npm run docs:config`.
 * A test fails when the committed file differs from what this writes.
 */
import { writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { renderConfigurationDocs } from "./render-docs.js";

const target = new URL("../../docs/configuration.md", import.meta.url);
await writeFile(target, renderConfigurationDocs());
process.stdout.write(`wrote ${fileURLToPath(target)}\n`);
