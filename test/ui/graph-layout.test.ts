import { describe, expect, it } from "vitest";
import { buildRunView } from "../../src/ui/build-run-view.js";
import { renderGraphSvg } from "../../src/ui/view/graph-svg.js";
import { edgeLabelText, labelBox } from "../../src/ui/view/graph-geometry.js";
import type { GraphView, LayoutPoint } from "../../src/ui/view/run-view.js";
import { lifecycleFailingTestOnce, storedOf } from "./simulated-run.js";

interface Box extends LayoutPoint {
  width: number;
  height: number;
}

function overlap(a: Box, b: Box): boolean {
  return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
}

function near(point: LayoutPoint | undefined, box: Box | undefined): boolean {
  if (point === undefined || box === undefined) return false;
  const inside = (v: number, from: number, size: number) => v >= from - 1 && v <= from + size + 1;
  return inside(point.x, box.x, box.width) && inside(point.y, box.y, box.height);
}

describe("the run page's graph", async () => {
  const sim = lifecycleFailingTestOnce();
  const { run, evidence } = storedOf(sim);
  const view = await buildRunView(run, evidence);
  const graph: GraphView = view.graph;
  const { layout } = graph;
  const labels = graph.edges.flatMap((edge, index) => {
    const at = layout.edges[index]?.label;
    const text = edgeLabelText(edge, edge.maxTraversals ?? 0);
    return at === undefined || text === "" ? [] : [{ text, box: { ...at, ...labelBox(text) } }];
  });

  it("is laid out by elkjs with no edge label over a node or another label", () => {
    // Room is kept for the widest count a back-edge can show.
    expect(labels.map((label) => label.text)).toEqual(
      expect.arrayContaining(["failed 3/3", "needs-changes 2/2", "approved", "rejected"]),
    );
    const boxes = Object.values(layout.boxes);
    expect(boxes).toHaveLength(graph.nodes.length + graph.terminals.length);
    for (const [index, label] of labels.entries()) {
      for (const box of boxes) expect(overlap(label.box, box), label.text).toBe(false);
      for (const other of labels.slice(index + 1))
        expect(overlap(label.box, other.box), `${label.text} / ${other.text}`).toBe(false);
    }
    for (const [a, b] of boxes.flatMap((box, i) => boxes.slice(i + 1).map((o) => [box, o])))
      expect(overlap(a as Box, b as Box)).toBe(false);
  });

  it("routes every edge from its source to its target, back-edges too", () => {
    graph.edges.forEach((edge, index) => {
      const points = layout.edges[index]?.points ?? [];
      expect(near(points[0], layout.boxes[edge.from]), `${edge.from}→${edge.to}`).toBe(true);
      expect(near(points.at(-1), layout.boxes[edge.to]), `${edge.from}→${edge.to}`).toBe(true);
    });
    // The flow reads top to bottom: the entry above the nodes it leads to.
    expect(layout.boxes.requirements?.y).toBeLessThan(layout.boxes.implement?.y ?? 0);
    expect(layout.boxes.implement?.y).toBeLessThan(layout.boxes.review?.y ?? 0);
  });

  it("colours each node by its state and draws the path taken", () => {
    const svg = renderGraphSvg(graph);
    const stateOf = (id: string) =>
      new RegExp(`data-node="${id}" data-state="([a-z-]+)"`).exec(svg)?.[1];
    expect(stateOf("requirements")).toBe("succeeded");
    expect(stateOf("deploy-approval")).toBe("waiting");
    expect(stateOf("deploy")).toBe("not-reached");
    expect(svg).toContain('class="edge taken" data-from="requirements" data-to="design"');
    expect(svg).toContain('class="edge taken" data-from="review" data-to="deploy-approval"');
    expect(svg).toContain('class="edge back taken" data-from="test-result" data-to="implement"');
    expect(svg).toContain('class="edge" data-from="review" data-to="escalated"');
    // The failed test's visit is failed; the node's latest visit passed.
    expect(view.visits.filter((visit) => visit.node === "test").map((v) => v.state)).toEqual([
      "failed",
      "succeeded",
    ]);
  });
});
