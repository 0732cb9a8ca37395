import { describe, expect, it } from "vitest";
import type { CommandRequest } from "../../src/engine/commands.js";
import type { Effect, RunEvent } from "../../src/engine/model.js";
import { parseOutputs } from "../../src/engine/outputs.js";
import { SimulatedRun, definitionOf, workflowOf } from "./harness.js";

const DECLARED = {
  version: { type: "string" as const },
  count: { type: "number" as const },
  ok: { type: "boolean" as const },
  meta: { type: "json" as const },
};

describe("parseOutputs", () => {
  it("reads name=value lines and name<<DELIM blocks, typed as declared", () => {
    const text = 'version=1.2.3\ncount=7\nok=true\nmeta<<EOF\n{"a": [1,\n 2]}\nEOF\n';
    expect(parseOutputs(text, DECLARED)).toEqual({
      ok: true,
      values: { version: "1.2.3", count: 7, ok: true, meta: { a: [1, 2] } },
    });
  });

  it("reads one JSON object", () => {
    expect(parseOutputs('{"count": 3, "meta": null}', DECLARED)).toEqual({
      ok: true,
      values: { count: 3, meta: null },
    });
  });

  it("refuses a value of the wrong type, an undeclared name and an unclosed block, saying which", () => {
    expect(parseOutputs("count=seven\n", DECLARED)).toEqual({
      ok: false,
      reason: 'output count is not a number: "seven"',
    });
    expect(parseOutputs('{"ok": "yes"}', DECLARED)).toEqual({
      ok: false,
      reason: 'output ok is not a boolean: "yes"',
    });
    expect(parseOutputs("secret=1\n", DECLARED)).toEqual({
      ok: false,
      reason: "output secret is not declared (declared: version, count, ok, meta)",
    });
    expect(parseOutputs("meta<<END\n{}\n", DECLARED)).toEqual({
      ok: false,
      reason: "output meta: no closing END line",
    });
  });
});

const WORKFLOW = workflowOf(`version: 1
name: t
on: { label: go }
nodes:
  build:
    kind: run
    run: ./build.sh
    outputs:
      version: { type: string, description: The version built }
      count: { type: number }
  ship: { kind: run, run: ./ship.sh, inputs: [version] }
edges:
  - { from: build, to: ship }
`);

/** A run whose `./build.sh` writes `written` to its output file. */
function runWithOutputFile(written: string): SimulatedRun {
  const sim = new SimulatedRun(definitionOf(WORKFLOW), {
    pause: (effect) =>
      effect.type === "command.dispatch" &&
      effect.request.command.type === "script" &&
      effect.request.command.script === "./build.sh",
  });
  sim.start();
  const build = requests(sim.effects).find(
    (r) => r.command.type === "script" && r.command.script === "./build.sh",
  );
  if (build === undefined) throw new Error("build did not start");
  const devboxId = sim.snapshot.devbox?.id ?? "";
  const event: RunEvent = {
    type: "command.finished",
    devboxId,
    at: sim.tick(),
    result: {
      commandId: build.commandId,
      exitCode: 0,
      output: "",
      durationMs: 1,
      outputFile: written,
    },
  };
  sim.send(event);
  sim.drain();
  return sim;
}

const requests = (effects: Effect[]): CommandRequest[] =>
  effects.flatMap((e) => (e.type === "command.dispatch" ? [e.request] : []));

describe("node outputs in a run", () => {
  it("gives the writer an output file and later nodes every output so far, recording before and after", () => {
    const sim = runWithOutputFile("version=2.0.1\ncount=4\n");
    expect(sim.snapshot.status).toBe("succeeded");
    const build = requests(sim.effects).find(
      (r) => r.command.type === "script" && r.command.script === "./build.sh",
    );
    expect(build?.files?.output).toBe("");
    expect(build?.files?.outputs).toBeUndefined();
    const ship = requests(sim.effects).find(
      (r) => r.command.type === "script" && r.command.script === "./ship.sh",
    );
    expect(JSON.parse(ship?.files?.outputs ?? "{}")).toEqual({ version: "2.0.1", count: 4 });
    expect(ship?.files?.output).toBeUndefined();
    const recorded = sim.effects.flatMap((e) =>
      e.type === "evidence" && e.entry.kind === "outputs.recorded" ? [e.entry] : [],
    );
    expect(recorded).toEqual([
      expect.objectContaining({ node: "build", before: {}, after: { version: "2.0.1", count: 4 } }),
    ]);
  });

  it("fails the node with the reason when an output has the wrong type", () => {
    const sim = runWithOutputFile("count=many\n");
    expect(sim.snapshot.status).toBe("failed");
    expect(sim.snapshot.visits[0]?.reason).toBe(
      'bad outputs: output count is not a number: "many"',
    );
    expect(sim.scripts).not.toContain("./ship.sh");
  });
});
