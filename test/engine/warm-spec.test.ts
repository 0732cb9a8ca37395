import { expect, it } from "vitest";
import { parseWorkflow } from "../../src/workflow/parse.js";
import { SimulatedRun, definitionOf, workflowOf } from "./harness.js";

const workflow = (devbox: string) => `version: 1
name: t
on: { label: go }
${devbox}
nodes:
  build: { kind: run, run: make }
`;

it("a claimed DevBox's spec asks for devbox.warm DevBoxes at the default branch, or none", () => {
  const specOf = (devbox: string) => {
    const definition = definitionOf(workflowOf(workflow(devbox)));
    const sim = new SimulatedRun(definition).start();
    const spec = sim.effects.flatMap((e) => (e.type === "devbox.claim" ? [e.spec] : []))[0];
    return { spec, baseBranch: definition.baseBranch };
  };
  const warm = specOf("devbox: { setup: [npm ci], warm: 2 }");
  expect(warm.spec?.warm).toEqual({ count: 2, branch: warm.baseBranch });
  expect(specOf("devbox: { warm: 0 }").spec?.warm).toMatchObject({ count: 0 });
  expect(specOf("devbox: { setup: [npm ci] }").spec).not.toHaveProperty("warm");
});

it("refuses a devbox.warm that is not a whole number from 0 to 8, saying so", () => {
  const messageOf = (value: string) => {
    const parsed = parseWorkflow(workflow(`devbox: { warm: ${value} }`));
    return parsed.ok ? undefined : parsed.findings[0]?.message;
  };
  expect(messageOf("9")).toBe("devbox.warm must be at most 8");
  expect(messageOf("1.5")).toBe("devbox.warm must be an integer, not number 1.5");
  expect(messageOf("-1")).toContain("devbox.warm must be at least 0");
});
