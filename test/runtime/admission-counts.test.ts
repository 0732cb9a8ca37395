import { describe, expect, it } from "vitest";
import { Admission } from "../../src/runtime/admission.js";
import type { RunDriver } from "../../src/runtime/ports.js";
import type { Store } from "../../src/store/store.js";
import { workflowOf } from "../engine/harness.js";

const plain = workflowOf(`version: 1
name: plain
on: { label: go }
nodes:
  only: { kind: run, run: "true" }
edges:
  - { from: only, to: done }
`);

/** A store that refuses every read of the active runs: admission must not need one. */
const noScans = new Proxy({} as Store, {
  get: (_target, name) => () => {
    throw new Error(`admission read the store (${String(name)}) for a workflow without limits`);
  },
});

describe("admission without admission settings", () => {
  it("starts the run at once without reading the repository's other runs", async () => {
    const started: string[] = [];
    const runs: RunDriver = {
      deliver: (runId) => {
        started.push(runId);
        return Promise.resolve({ applied: true } as Awaited<ReturnType<RunDriver["deliver"]>>);
      },
    };
    const admission = new Admission({ store: noScans, now: () => 1, holder: "h" });
    expect(await admission.admit("o/r", plain, "r1", runs)).toBe(true);
    expect(started).toEqual(["r1"]);
  });
});
