import { describe, expect, it } from "vitest";
import { renderStatusComment, VISIBLE_VISITS } from "../../src/github/surfaces/render-status.js";
import { lifecycleFailingTestOnce } from "../ui/simulated-run.js";

/**
 * The lifecycle example with its tests failing once and its review asking for changes twice:
 * sixteen visits, parked at the deploy approval.
 */
function longRun() {
  let reviews = 0;
  return lifecycleFailingTestOnce(() => ({
    judge: (labels) =>
      labels.includes("needs-changes") && reviews++ < 2 ? "needs-changes" : (labels[0] ?? ""),
  }));
}

describe("the status comment", () => {
  const sim = longRun();
  const body = renderStatusComment(sim.definition, sim.snapshot);
  const [folded = "", open = ""] = body.split("</details>");
  const rows = (text: string) => text.split("\n").filter((line) => /^\| \d+ \|/.test(line));

  it("keeps to about a screen: the latest visits open, the earlier ones folded", () => {
    expect(sim.snapshot.status).toBe("awaiting_input");
    const visits = sim.snapshot.visits.length;
    expect(visits).toBeGreaterThan(VISIBLE_VISITS + 4);
    expect(folded).toContain(
      `<details><summary>${visits - VISIBLE_VISITS} earlier visits</summary>`,
    );
    expect(rows(folded)).toHaveLength(visits - VISIBLE_VISITS);
    expect(rows(open)).toHaveLength(VISIBLE_VISITS);
    expect(rows(open).at(-1)).toMatch(/^\| \d+ \| deploy-approval \| 1 \| ✋ … \| … \| {2}\|$/);
  });

  it("fills the reason column from verdicts and feedback, and numbers each node's visits", () => {
    const reviewRows = rows(body).filter((row) => row.includes("| review |"));
    expect(reviewRows.map((row) => row.split(" | ").slice(2, 4))).toEqual([
      ["1", "✅ needs-changes"],
      ["2", "✅ needs-changes"],
      ["3", "✅ approved"],
    ]);
    for (const row of reviewRows)
      expect(row).toMatch(/\| the judge answered \w[\w-]*: because \|$/);
    const failedTest = rows(body).find((row) => row.includes("| test |"));
    expect(failedTest).toMatch(/\| test \| 1 \| ❌ failed \| [\d.]+ s \| /);
    const retried = rows(body).filter((row) => row.includes("| implement |"))[1];
    expect(retried).toMatch(/\| told: .+ \|$/);
  });

  it("colours the graph's nodes by state and draws the path taken", () => {
    const mermaid = /```mermaid\n([\s\S]*?)```/.exec(body)?.[1] ?? "";
    expect(mermaid).toMatch(/classDef s_waiting fill:#fff8c5/);
    expect(mermaid).toMatch(/class n6 s_waiting/);
    expect(mermaid).toMatch(/class n0,n1,n2,n3,n4,n5 s_succeeded/);
    expect(mermaid).toMatch(/class n7,n8,n9 s_not_reached/);
    // Edges 0-4 and the two back-edges were crossed (link 0 is the start arrow).
    expect(mermaid).toContain("linkStyle 1,2,3,4,5,6,8,9 stroke:#0969da");
  });
});
