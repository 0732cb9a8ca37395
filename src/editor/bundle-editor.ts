import { build } from "esbuild";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { defaultBundleDir } from "./editor-server.js";

/**
 * Bundles the editor's script with the validator, yaml and elkjs (the same source the CLI runs)
 * into `editor.js` for the browser. Run by `npm run build`; the tests call it too.
 */
export async function bundleEditor(outdir = defaultBundleDir()): Promise<string> {
  const outfile = join(outdir, "editor.js");
  await build({
    entryPoints: [fileURLToPath(new URL("../../src/editor/client/editor.ts", import.meta.url))],
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    minify: true,
    legalComments: "none",
    logLevel: "warning",
    outfile,
  });
  return outfile;
}
