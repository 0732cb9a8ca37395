import { describe, expect, it } from "vitest";
import { Admission, admissionScope } from "../../src/runtime/admission.js";
import type { RunDriver } from "../../src/runtime/ports.js";
import { Runtime } from "../../src/runtime/runtime.js";
import type { Store } from "../../src/store/store.js";
import { definitionOf, workflowOf } from "../engine/harness.js";
import { useTestDynamo } from "../store/dynalite-fixture.js";

const dynamo = useTestDynamo();

const limited = workflowOf(`version: 1
name: limited
on: { label: go }
admission: { max_active_runs: 1 }
nodes:
  gate: { kind: approval }
edges:
  - { from: gate, to: done, label: approved }
  - { from: gate, to: failed, label: rejected }
`);

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

/** A store counting its requests, runs created on it queued, and a driver that records starts. */
async function limitedRuns(count: number) {
  const requests: string[] = [];
  const store = await dynamo.newStore({ onRequest: (name) => requests.push(name) });
  const runtime = new Runtime({
    store,
    performer: { perform: () => Promise.resolve(null) },
    now: () => 1,
  });
  for (let i = 0; i < count; i++) {
    const definition = definitionOf(limited, { runId: `q${String(i).padStart(3, "0")}` });
    await runtime.create(definition, { repo: "o/r" }, 100 + i);
  }
  const started: string[] = [];
  const runs: RunDriver = {
    deliver: (runId) => {
      started.push(runId);
      return Promise.resolve({ applied: true } as Awaited<ReturnType<RunDriver["deliver"]>>);
    },
  };
  return {
    store,
    requests,
    started,
    runs,
    admission: new Admission({ store, now: () => 1, holder: "h" }),
  };
}

describe("admission with limits", () => {
  it("counts a scope's runs with one read of its roster, however many runs are queued", async () => {
    const { admission, requests } = await limitedRuns(60);
    await admission.counts("o/r", "limited"); // The first count builds it (see below).
    requests.length = 0;
    const counts = await admission.counts("o/r", "limited");
    expect(requests).toEqual(["GetItem"]);
    expect(counts.queued).toHaveLength(60);
    expect(counts.queued[0]?.runId).toBe("q000");
    expect(await admission.queuePosition("o/r", "limited", "q007")).toBe(8);
  });

  it("rereads the runs it counts before refusing, so a run whose entry lagged does not hold the slot", async () => {
    const { store, admission, runs, started } = await limitedRuns(1);
    // A process died after its run finished and before the roster heard: the entry says running.
    const scope = admissionScope("o/r", "stale");
    const stale = definitionOf(limited, { runId: "stale" });
    const runtime = new Runtime({
      store,
      performer: { perform: () => Promise.resolve(null) },
      now: () => 1,
    });
    await runtime.create(
      { ...stale, workflow: { ...limited, name: "stale" } },
      { repo: "o/r" },
      50,
    );
    const stored = await store.getRun("stale");
    await store.saveRun({ ...stored!, version: 2, status: "cancelled" });
    await store.noteInRoster(scope, "stale", { runId: "stale", status: "running", createdAt: 50 });
    const workflow = { ...limited, name: "stale" };
    expect(await admission.admit("o/r", workflow, "next", runs)).toBe(true);
    expect(started).toEqual(["next"]);
    expect((await store.admissionState(scope)).roster?.map((entry) => entry.runId)).toEqual([]);
  });

  it("starts a queued run when the slot frees while another replica holds the queue's lease", async () => {
    const { store } = await limitedRuns(1);
    const runtime = new Runtime({
      store,
      performer: { perform: () => Promise.resolve(null) },
      now: () => 1,
    });
    const scope = admissionScope("o/r", "limited");
    await runtime.create(definitionOf(limited, { runId: "busy" }), { repo: "o/r" }, 50);
    const setStatus = async (runId: string, status: "running" | "succeeded") => {
      const stored = await store.getRun(runId);
      await store.saveRun({ ...stored!, version: stored!.version + 1, status });
      const createdAt = stored!.createdAt;
      await store.noteInRoster(scope, runId, { runId, status, createdAt });
    };
    await setStatus("busy", "running");
    // Starting a run takes it out of the queue, as the runtime's run.start does.
    const started: string[] = [];
    const runs: RunDriver = {
      deliver: async (runId) => {
        started.push(runId);
        await setStatus(runId, "running");
        return { applied: true } as Awaited<ReturnType<RunDriver["deliver"]>>;
      },
    };
    // Replica A drains and finds the slot taken. Before it releases the lease, the run on
    // replica B ends and B's own drain finds the lease held: A must look again.
    const other = new Admission({ store, now: () => 1, holder: "B" });
    let drainedByB: string[] | undefined;
    const a = new Proxy(store, {
      get: (target, name, receiver) => {
        const value = Reflect.get(target, name, receiver) as unknown;
        if (typeof value !== "function") return value;
        // The store keeps private fields: its methods run on it, not on the proxy.
        const method = (value as (...a: unknown[]) => unknown).bind(target);
        if (name !== "releaseLease") return method;
        return async (...args: unknown[]) => {
          if (drainedByB === undefined) {
            await setStatus("busy", "succeeded");
            drainedByB = await other.drain("o/r", "limited", runs);
          }
          return method(...args);
        };
      },
    });
    const admission = new Admission({ store: a, now: () => 1, holder: "A" });
    expect(await admission.drain("o/r", "limited", runs)).toEqual(["q000"]);
    expect(drainedByB).toEqual([]);
    expect(started).toEqual(["q000"]);
  });

  it("builds the roster once from the runs when it was never written (runs from before it)", async () => {
    const store = await dynamo.newStore();
    for (const runId of ["b", "a"]) {
      const createdAt = runId === "a" ? 1 : 2;
      await store.createRun({
        runId,
        version: 1,
        repo: "o/r",
        workflow: "limited",
        status: "queued",
        snapshot: {},
        outbox: [],
        createdAt,
        updatedAt: createdAt,
      });
    }
    const admission = new Admission({ store, now: () => 1, holder: "h" });
    expect((await admission.counts("o/r", "limited")).queued.map((run) => run.runId)).toEqual([
      "a",
      "b",
    ]);
    const { roster } = await store.admissionState(admissionScope("o/r", "limited"));
    expect(roster?.map((entry) => entry.runId).sort()).toEqual(["a", "b"]);
  });
});
