import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isFinal } from "../../src/engine/model.js";
import { DEFAULT_MAX_TRAVERSALS } from "../../src/workflow/graph.js";
import { parseWorkflow } from "../../src/workflow/parse.js";
import { SimulatedRun, definitionOf } from "./harness.js";

type Kind = "run" | "loop" | "status" | "deterministic" | "approval";

/** A random workflow: a chain of nodes with labelled exits and random capped back-edges. */
const workflowArbitrary = fc
  .record({
    kinds: fc.array(fc.constantFrom<Kind>("run", "loop", "status", "deterministic", "approval"), {
      minLength: 1,
      maxLength: 8,
    }),
    backs: fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 3 }), fc.boolean()), {
      maxLength: 8,
    }),
  })
  .map(({ kinds, backs }) => {
    const ids = kinds.map((_, index) => `n${index}`);
    const nodes: string[] = [];
    const edges: string[] = [];
    kinds.forEach((kind, index) => {
      const id = ids[index] as string;
      const next = ids[index + 1] ?? "done";
      const [target, cap, giveUp] = backs[index] ?? [0, 1, false];
      const back = `{ from: ${id}, to: ${ids[target % (index + 1)]}, back: true, max_traversals: ${cap}`;
      switch (kind) {
        case "run":
          nodes.push(`  ${id}: { kind: run, run: step-${id} }`);
          edges.push(`  - { from: ${id}, to: ${next} }`);
          break;
        case "loop":
          nodes.push(
            `  ${id}: { kind: loop, goal: g, agent: { engine: claude }, gates: [{ name: g, run: gate-${id} }], budget: { max_iterations: ${cap} } }`,
          );
          edges.push(
            `  - { from: ${id}, to: ${next} }`,
            `  - { from: ${id}, to: escalated, label: exhausted }`,
          );
          break;
        case "status":
        case "deterministic": {
          const evaluator = kind === "status" ? "status" : `deterministic, run: check-${id}`;
          const [yes, no] = kind === "status" ? ["succeeded", "failed"] : ["pass", "fail"];
          nodes.push(`  ${id}: { kind: decision, evaluator: ${evaluator} }`);
          edges.push(
            `  - { from: ${id}, to: ${next}, label: ${yes} }`,
            `  - ${back}, label: ${no} }`,
          );
          if (giveUp) edges.push(`  - { from: ${id}, to: escalated, label: exhausted }`);
          break;
        }
        case "approval":
          nodes.push(`  ${id}: { kind: approval }`);
          edges.push(
            `  - { from: ${id}, to: ${next}, label: approved }`,
            `  - ${back}, label: rejected }`,
          );
          if (giveUp) edges.push(`  - { from: ${id}, to: failed, label: exhausted }`);
          break;
      }
    });
    return `version: 1\nname: random\non: { label: go }\nnodes:\n${nodes.join("\n")}\nedges:\n${edges.join("\n")}\n`;
  });

describe("run properties", () => {
  it("for random valid workflows and outcomes, a run ends, respects back-edge caps and has one active node", () => {
    fc.assert(
      fc.property(
        workflowArbitrary,
        fc.array(fc.nat(9), { minLength: 1, maxLength: 64 }),
        (yaml, dice) => {
          const parsed = parseWorkflow(yaml);
          fc.pre(parsed.ok);
          if (!parsed.ok) return;
          let roll = 0;
          const next = () => dice[roll++ % dice.length] as number;
          const sim = new SimulatedRun(definitionOf(parsed.workflow), {
            exit: () => (next() < 4 ? 1 : 0),
            pause: (effect) => effect.type === "command.dispatch" && next() === 0,
          });
          const caps = parsed.workflow.edges.map((edge) =>
            edge.back === true ? (edge.max_traversals ?? DEFAULT_MAX_TRAVERSALS) : Infinity,
          );
          const check = () => {
            const open = sim.snapshot.visits.filter((visit) => visit.endedAt === undefined);
            expect(open.length).toBeLessThanOrEqual(1);
            for (const [index, count] of Object.entries(sim.snapshot.traversals)) {
              expect(count).toBeLessThanOrEqual(caps[Number(index)] as number);
            }
          };
          sim.start();
          for (let guard = 0; guard < 500 && !isFinal(sim.snapshot.status); guard++) {
            check();
            const at = sim.tick();
            const awaiting = sim.snapshot.awaiting;
            if (awaiting?.kind === "approval") {
              const decision = next() < 5 ? "approved" : "rejected";
              sim.send({ type: "approval.answer", decision, actor: "bob", at });
            } else if (awaiting?.kind === "lost") {
              sim.send({
                type: "run.resolve",
                outcome: next() < 5 ? "succeeded" : "failed",
                actor: "bob",
                at,
              });
            } else if (sim.snapshot.devbox !== undefined) {
              // A paused command: its DevBox is lost.
              sim.send({
                type: "devbox.lost",
                devboxId: sim.snapshot.devbox.id,
                reason: "gone",
                at,
              });
            }
            sim.drain();
          }
          check();
          expect(isFinal(sim.snapshot.status)).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });
});
