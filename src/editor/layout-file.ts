import { z } from "zod";
import type { NodePositions } from "./workflow-files.js";

/**
 * Where the canvas keeps node positions: one JSON file beside the workflows, keyed by workflow
 * path. Positions never enter a workflow file, so moving a node changes nothing a run reads.
 */
export const LAYOUT_FILE = ".clustercode/layout.json";

const point = z.object({ x: z.number().finite(), y: z.number().finite() });
const layoutSchema = z.object({
  version: z.literal(1),
  workflows: z.record(z.string(), z.record(z.string(), point)),
});

type Layout = z.output<typeof layoutSchema>;

/** The positions of `path`'s nodes in a layout file's text; none when absent or unreadable. */
export function positionsOf(text: string | undefined, path: string): NodePositions {
  return readLayout(text).workflows[path] ?? {};
}

/** The layout file's text with `path`'s positions replaced (rounded to whole pixels). */
export function withPositions(
  text: string | undefined,
  path: string,
  positions: NodePositions,
): string {
  const layout = readLayout(text);
  const rounded: NodePositions = {};
  for (const [id, { x, y }] of Object.entries(positions).sort(([a], [b]) => a.localeCompare(b)))
    rounded[id] = { x: Math.round(x), y: Math.round(y) };
  layout.workflows[path] = rounded;
  return `${JSON.stringify(layout, null, 2)}\n`;
}

/** Checks positions sent by a browser: a mapping of node ids to finite points. */
export function parsePositions(value: unknown): NodePositions | undefined {
  const parsed = z.record(z.string().max(64), point).safeParse(value ?? {});
  return parsed.success && Object.keys(parsed.data).length <= 500 ? parsed.data : undefined;
}

function readLayout(text: string | undefined): Layout {
  if (text === undefined) return { version: 1, workflows: {} };
  try {
    const parsed = layoutSchema.safeParse(JSON.parse(text));
    if (parsed.success) return parsed.data;
  } catch {
    // A hand-broken layout file only loses positions: the canvas lays the graph out again.
  }
  return { version: 1, workflows: {} };
}
