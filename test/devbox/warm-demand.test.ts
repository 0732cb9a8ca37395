/**
 * What the app declares from a default branch's workflows (see docs/warm-start.md): the warm
 * specs, derived as the engine derives a claim's spec, and the listeners an executor's pool
 * subscribes with.
 */
import { describe, expect, it } from "vitest";
import { templateOf, warmKey } from "../../src/devbox/warm-key.js";
import { WarmDemand, warmSpecsOf, type WarmSpec } from "../../src/devbox/warm-demand.js";
import { definitionOf, SimulatedRun, workflowOf } from "../engine/harness.js";

const workflow = (name: string, devbox: string) =>
  workflowOf(`version: 1
name: ${name}
on: { label: ${name} }
${devbox}
nodes:
  build: { kind: run, run: make }
`);

describe("the warm specs of a default branch", () => {
  it("ask for the pool a run's claim takes from", () => {
    const asked = workflow(
      "a",
      "devbox: { setup: [npm ci], secrets: [ANTHROPIC_API_KEY], memory: 2GiB, warm: 2 }",
    );
    const [declared] = warmSpecsOf("acme/widgets", "main", [asked]);
    const sim = new SimulatedRun(definitionOf(asked)).start();
    const spec = sim.effects.flatMap((e) => (e.type === "devbox.claim" ? [e.spec] : []))[0];
    expect(spec).toBeDefined();
    // The hub takes the provider keys it holds out of the claim's secrets: the pool is the same.
    const claimed = templateOf({
      devboxId: "d1",
      runId: "r1",
      apiUrl: "http://127.0.0.1:1",
      token: "t",
      repository: "x",
      repo: "acme/widgets",
      spec: { ...spec!, secrets: [] },
    });
    expect(declared).toMatchObject({
      repo: "acme/widgets",
      branch: "main",
      count: 2,
      memoryMiB: 2048,
    });
    expect(warmKey(claimed!)).toBe(warmKey(declared!));
  });

  it("keep one spec per DevBox shape (the larger count) and none for a workflow without warm", () => {
    const specs = warmSpecsOf("acme/widgets", "trunk", [
      workflow("a", "devbox: { setup: [npm ci], warm: 1 }"),
      workflow("b", "devbox: { setup: [npm ci], warm: 3 }"),
      workflow("c", "devbox: { setup: [make], warm: 0 }"),
      workflow("d", "devbox: { setup: [make] }"),
      workflow("e", "devbox: { image: node:22, warm: 1 }"),
    ]);
    expect(specs.map(({ count, setup, image }) => ({ count, setup, image }))).toEqual([
      { count: 3, setup: ["npm ci"], image: undefined },
      { count: 1, setup: [], image: "node:22" },
    ]);
    expect(specs.every((spec) => spec.branch === "trunk")).toBe(true);
  });
});

describe("a warm demand", () => {
  const spec: WarmSpec = { repo: "acme/widgets", branch: "main", count: 1, setup: [], secrets: [] };

  it("tells a listener what was declared before it listened, then every change", () => {
    const demand = new WarmDemand();
    demand.declare("acme/widgets", [spec]);
    const heard: [string, number][] = [];
    demand.listen((repo, specs) => heard.push([repo, specs.length]));
    demand.declare("acme/widgets", []);
    demand.declare("acme/gadgets", [{ ...spec, repo: "acme/gadgets" }]);
    expect(heard).toEqual([
      ["acme/widgets", 1],
      ["acme/widgets", 0],
      ["acme/gadgets", 1],
    ]);
    expect(demand.declared("acme/widgets")).toEqual([]);
    expect(demand.declared("acme/gadgets")).toHaveLength(1);
  });
});
