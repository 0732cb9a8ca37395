// @ts-check
import { dirname, relative, resolve, sep } from "node:path";

/**
 * The layers of `src/`, bottom first (docs/architecture.md explains the order). A folder may
 * import its own files and the folders of lower layers only: never a higher layer, and never a
 * folder beside it in its own layer, so the parts of one layer stay independent of each other.
 * A folder of `src/` that is not listed here fails the rule until it is given a layer.
 */
export const LAYERS = [
  ["errors", "aws", "memory", "settings"],
  ["workflow"],
  ["engine"],
  ["store", "agents", "telemetry", "devbox"],
  ["runtime"],
  ["scorecard"],
  ["ui"],
  ["editor"],
  ["github", "cli"],
];

const SRC = resolve(import.meta.dirname, "..", "src");

/** The layer index of `folder`, or undefined when it has none. */
function layerOf(folder) {
  const index = LAYERS.findIndex((layer) => layer.includes(folder));
  return index === -1 ? undefined : index;
}

/** The folder of `src/` that `path` (absolute) lies in, or undefined outside `src/`. */
function srcFolder(path) {
  const inside = relative(SRC, path);
  if (inside === "" || inside.startsWith("..") || inside.includes(`..${sep}`)) return undefined;
  const [folder, ...rest] = inside.split(sep);
  return rest.length === 0 ? undefined : folder;
}

/** Why `from` may not import `to`, or undefined when it may. */
function refusal(from, to) {
  if (from === to) return undefined;
  const fromLayer = layerOf(from);
  const toLayer = layerOf(to);
  if (fromLayer === undefined) return `src/${from} has no layer in lint/layers.js`;
  if (toLayer === undefined) return `src/${to} has no layer in lint/layers.js`;
  if (toLayer < fromLayer) return undefined;
  const where = toLayer === fromLayer ? "beside it in the same layer" : "a higher layer";
  return `src/${from} may not import src/${to} (${where}): layers only look down (docs/architecture.md)`;
}

/** @type {import("eslint").Rule.RuleModule} */
const lookDown = {
  meta: {
    type: "problem",
    docs: { description: "Imports in src/ only look down the layers (lint/layers.js)." },
    schema: [],
  },
  create(context) {
    const from = srcFolder(context.filename);
    if (from === undefined) return {};
    /** @param {import("estree").Node & { source?: unknown }} node */
    const check = (node) => {
      const source = /** @type {{ type?: string; value?: unknown } | null | undefined} */ (
        node.source
      );
      if (source?.type !== "Literal" || typeof source.value !== "string") return;
      if (!source.value.startsWith(".")) return;
      const to = srcFolder(resolve(dirname(context.filename), source.value));
      if (to === undefined) return;
      const why = refusal(from, to);
      if (why !== undefined) context.report({ node: source, message: why });
    };
    return {
      ImportDeclaration: check,
      ExportNamedDeclaration: check,
      ExportAllDeclaration: check,
      ImportExpression: check,
    };
  },
};

/** The plugin with the one rule: `layers/look-down`. */
export const layersPlugin = { rules: { "look-down": lookDown } };
