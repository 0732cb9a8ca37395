import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { Effect, RunEvent, RunSnapshot } from "../../src/engine/model.js";
import { createSnapshot, step } from "../../src/engine/step.js";
import { SimulatedRun, definitionOf, workflowFile, type World } from "./harness.js";

/** A golden event log: the events of a run and what each transition gave. */
interface Golden {
  workflow: string;
  events: RunEvent[];
  transitions: { snapshot: RunSnapshot; effects: Effect[]; refused?: string }[];
}

const scenarios: Record<
  string,
  { workflow: string; world: World; drive: (sim: SimulatedRun) => void }
> = {
  "lifecycle-approved": {
    workflow: "workflows-schema/examples/lifecycle.yml",
    world: {
      exit: (request) =>
        request.command.type === "script" && request.command.script.startsWith("test -s incident")
          ? 1
          : 0,
      cost: 0.5,
    },
    drive: (sim) => {
      sim.start();
      sim.send({
        type: "approval.answer",
        decision: "approved",
        actor: "bob",
        where: "comment",
        at: sim.tick(),
      });
      sim.drain();
    },
  },
  "lifecycle-rework-and-reject": {
    workflow: "workflows-schema/examples/lifecycle.yml",
    world: (() => {
      let tests = 0;
      return {
        exit: (request) =>
          request.command.type === "script" &&
          request.command.script === "npm test" &&
          tests++ === 2
            ? 1
            : 0,
        judge: (labels: string[]) =>
          labels.includes("needs-changes") && tests < 6 ? "needs-changes" : (labels[0] ?? ""),
      } satisfies World;
    })(),
    drive: (sim) => {
      sim.start();
      sim.send({
        type: "approval.answer",
        decision: "rejected",
        actor: "carol",
        note: "not now",
        at: sim.tick(),
      });
      sim.drain();
    },
  },
};

const fixturePath = (name: string) => new URL(`../fixtures/${name}.json`, import.meta.url);

function record(name: string): Golden {
  const scenario = scenarios[name]!;
  const sim = new SimulatedRun(definitionOf(workflowFile(scenario.workflow)), scenario.world);
  scenario.drive(sim);
  let snapshot = createSnapshot(sim.definition, 1_000_000);
  const transitions = sim.events.map((event) => {
    const result = step(sim.definition, snapshot, event);
    snapshot = result.snapshot;
    return { ...result };
  });
  return { workflow: scenario.workflow, events: sim.events, transitions };
}

describe("golden event logs", () => {
  for (const name of Object.keys(scenarios)) {
    it(`replays ${name} to the same snapshots and effects`, () => {
      const path = fixturePath(name);
      if (process.env.UPDATE_GOLDEN === "1" || !existsSync(path)) {
        writeFileSync(path, JSON.stringify(record(name), null, 1) + "\n");
      }
      const golden = JSON.parse(readFileSync(path, "utf8")) as Golden;
      const definition = definitionOf(workflowFile(golden.workflow));
      let snapshot = createSnapshot(definition, 1_000_000);
      golden.events.forEach((event, index) => {
        const result = step(definition, snapshot, event);
        const expected = golden.transitions[index]!;
        expect(result.effects, `effects of event ${index} (${event.type})`).toEqual(
          expected.effects,
        );
        expect(result.snapshot, `snapshot after event ${index} (${event.type})`).toEqual(
          expected.snapshot,
        );
        expect(result.refused).toEqual(expected.refused);
        snapshot = result.snapshot;
      });
      expect(snapshot.status).toBe(golden.transitions.at(-1)?.snapshot.status);
      expect(["succeeded", "failed"]).toContain(snapshot.status);
    });
  }
});
