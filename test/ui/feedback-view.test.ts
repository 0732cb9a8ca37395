import { describe, expect, it } from "vitest";
import { buildRunView } from "../../src/ui/build-run-view.js";
import { renderRunPage } from "../../src/ui/view/render-run.js";
import { atApproval, replayGolden } from "./replayed-run.js";

const PATHS = { run: "/runs/Codertocat/Hello-World/r1", index: "/runs/Codertocat/Hello-World" };

describe("the run page shows feedback and what verdicts saw", () => {
  const { run, evidence } = replayGolden("lifecycle-rework-and-reject", { until: atApproval });
  const view = buildRunView(run, evidence);
  const html = renderRunPage(view, PATHS);

  it("lists what a node entered again was told", () => {
    const implement = view.visits.filter((visit) => visit.node === "implement");
    expect(implement[0]?.fedBack).toBeUndefined();
    expect(implement[1]?.fedBack?.some((line) => line.includes("[needs-changes]"))).toBe(true);
    expect(html).toContain("Told why it was entered again");
  });

  it("marks a verdict stale when the branch moved after it, and the last one current", () => {
    const reviews = view.visits.filter((visit) => visit.node === "review");
    expect(reviews.length).toBeGreaterThan(1);
    expect(reviews[0]?.decision?.headSha).toBeDefined();
    expect(reviews[0]?.decision?.stale).toBe(true);
    expect(reviews.at(-1)?.decision?.stale).toBeUndefined();
    expect(reviews.at(-1)?.decision?.headSha).toBe(view.lastSha);
    expect(html).toContain("the branch moved since");
  });
});
