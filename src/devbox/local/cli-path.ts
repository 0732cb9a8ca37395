import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The built CLI next to this module (`dist/devbox/local/` → `dist/cli/main.js`). When running from
 * sources (tests), the build in `dist/` of the package root.
 */
export function defaultCliPath(): string {
  const here = fileURLToPath(import.meta.url);
  if (here.endsWith(".ts"))
    return resolve(dirname(here), "..", "..", "..", "dist", "cli", "main.js");
  return fileURLToPath(new URL("../../cli/main.js", import.meta.url));
}
