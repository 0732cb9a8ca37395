import { expect, it } from "vitest";
import { SimulatedRun, definitionOf, workflowOf } from "./harness.js";

it("a claimed DevBox's spec carries devbox.cache as written, for the executor", () => {
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
  const cached = specOf(
    "devbox: { setup: [npm ci], cache: [{ key: [package-lock.json], paths: [node_modules] }] }",
  );
  expect(cached?.cache).toEqual([{ key: ["package-lock.json"], paths: ["node_modules"] }]);
  expect(specOf("devbox: { setup: [npm ci] }")).not.toHaveProperty("cache");
});
