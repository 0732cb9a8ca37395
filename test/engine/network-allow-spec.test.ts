import { expect, it } from "vitest";
import { SimulatedRun, definitionOf, workflowOf } from "./harness.js";

it("a claimed DevBox's spec carries devbox.network.allow as written, for the hub", () => {
  const specOf = (devbox: string) => {
    const sim = new SimulatedRun(
      definitionOf(
        workflowOf(`version: 1
name: t
on: { label: go }
${devbox}
nodes:
  build: { kind: run, run: make }
`),
      ),
    ).start();
    return sim.effects.flatMap((e) => (e.type === "devbox.claim" ? [e.spec] : []))[0];
  };
  expect(specOf("devbox: { network: { allow: [npm, api.example.com] } }")?.networkAllow).toEqual([
    "npm",
    "api.example.com",
  ]);
  expect(specOf("devbox: { setup: [npm ci] }")).not.toHaveProperty("networkAllow");
});
