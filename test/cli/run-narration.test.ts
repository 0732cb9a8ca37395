import { describe, expect, it } from "vitest";
import { EvidenceNarrator } from "../../src/cli/evidence-narrator.js";
import { statusDetail } from "../../src/cli/status-view.js";
import type { Effect } from "../../src/engine/model.js";
import { SimulatedRun, definitionOf, workflowOf, type World } from "../engine/harness.js";

const header = `version: 1
name: t
on: { label: go }
`;

function simulate(yaml: string, world: World = {}) {
  return new SimulatedRun(definitionOf(workflowOf(header + yaml)), world);
}

/** What `run` prints live and `log` reads back for the run's evidence so far. */
function narrate(effects: Effect[]): string[] {
  const narrator = new EvidenceNarrator();
  return effects.flatMap((effect) =>
    effect.type === "evidence" ? narrator.lines(effect.entry) : [],
  );
}

describe("a run as the CLI tells it", () => {
  it("shows the output of a losing prototype variant's failed gate", () => {
    const first: string[] = [];
    const sim = simulate(
      `nodes:
  design:
    kind: prototype
    brief: Sketch it
    variants: [{ engine: claude }, { engine: codex }]
    gates: [{ name: ok, run: test -s DESIGN.md }]
    select: judge
    judge: { provider: anthropic, model: m }
`,
      {
        // Variant 1's DevBox (the first claimed) fails its gate; variant 2 passes and wins.
        exit: (request, devboxId) => {
          if (first.length === 0) first.push(devboxId);
          return request.command.type === "script" && devboxId === first[0] ? 1 : 0;
        },
      },
    ).start();
    expect(sim.snapshot.status).toBe("succeeded");
    const lines = narrate(sim.effects);
    const failed = lines.findIndex((line) => line.startsWith("  ✗ test -s DESIGN.md: exit 1"));
    expect(failed, lines.join("\n")).toBeGreaterThan(-1);
    expect(lines[failed + 1]).toBe("    $ test -s DESIGN.md");
    expect(lines[failed + 2]).toMatch(/^ {4}│ output of c\d+$/);
    expect(lines).not.toContain("    (no output)");
  });

  it("names the back-edge that reached its cap, and the run's reason says it", () => {
    const sim = simulate(
      `nodes:
  implement: { kind: run, run: make }
  retry-router: { kind: decision, evaluator: status }
edges:
  - { from: implement, to: retry-router }
  - { from: retry-router, to: done, label: succeeded }
  - { from: retry-router, to: implement, label: failed, back: true, max_traversals: 3 }
  - { from: retry-router, to: failed, label: exhausted }
`,
      { exit: (request) => (request.command.type === "script" ? 1 : 0) },
    ).start();
    const lines = narrate(sim.effects);
    expect(lines.slice(-3)).toEqual([
      "■ retry-router: failed → implement",
      "  ⤺ retry-router → implement reached its cap of 3",
      "● run failed (reached failed: retry-router → implement reached its cap of 3)",
    ]);
  });

  it("numbers a node's visits, and counts a retry's attempts within its visit", () => {
    let failing = true;
    const sim = simulate(
      `nodes:
  build: { kind: run, run: make }
  check: { kind: approval }
edges:
  - { from: build, to: check }
  - { from: check, to: done, label: approved }
  - { from: check, to: build, label: rejected, back: true, max_traversals: 2 }
`,
      { exit: (request) => (request.command.type === "script" && failing ? 1 : 0) },
    ).start();
    const retry = () => {
      failing = false;
      sim.send({ type: "run.retry", actor: "bob", at: sim.tick() });
      sim.drain();
    };
    retry(); // visit 1 failed; its attempt 2 passes and waits at check
    sim.send({ type: "approval.answer", decision: "rejected", actor: "bob", at: sim.tick() });
    failing = true;
    sim.drain(); // visit 2 fails
    retry();
    expect(narrate(sim.effects).filter((line) => line.startsWith("▶"))).toEqual([
      "▶ build (run)",
      "▶ build (run, attempt 2)",
      "▶ check (approval)",
      "▶ build (run, visit 2)",
      "▶ build (run, visit 2, attempt 2)",
      "▶ check (approval, visit 2)",
    ]);
    const detail = statusDetail({ state: sim.snapshot, workflow: "t", shown: "awaiting_input" }, 0);
    expect(
      detail
        .split("\n")
        .slice(1, -1)
        .map((line) => line.replace(/ +\S+$/, "")),
    ).toEqual([
      "  build                visit 1  attempt 1  failed",
      "  build                visit 1  attempt 2  succeeded",
      "  check                visit 1  attempt 1  rejected",
      "  build                visit 2  attempt 1  failed",
      "  build                visit 2  attempt 2  succeeded",
      "  check                visit 2  attempt 1  awaiting approval",
    ]);
  });
});
