import { describe, expect, it } from "vitest";
import type { StoredRun } from "../../src/store/store.js";
import { RunRepository } from "../../src/store/run-repository.js";
import { StoreError } from "../../src/store/store-error.js";
import { useTestDynamo } from "./dynalite-fixture.js";

const dynamo = useTestDynamo();

function run(overrides: Partial<StoredRun> = {}): StoredRun {
  return {
    runId: "run-1",
    version: 1,
    repo: "octo/app",
    workflow: ".clustercode/fix.yml",
    status: "queued",
    snapshot: { node: "plan", vars: { empty: "", list: [] } },
    outbox: [{ kind: "start", seq: 1 }],
    createdAt: 1_000,
    updatedAt: 1_000,
    ...overrides,
  };
}

describe("runs", () => {
  it("creates a run once and reads it back as written", async () => {
    const store = await dynamo.newStore();
    expect(await store.createRun(run())).toBe(true);
    expect(await store.createRun(run({ snapshot: "other" }))).toBe(false);
    expect(await store.getRun("run-1")).toEqual(run());
    expect(await store.getRun("missing")).toBeUndefined();
  });

  it("lets exactly one of several concurrent saves of the same version win", async () => {
    const store = await dynamo.newStore();
    await store.createRun(run());
    const attempts = Array.from({ length: 8 }, (_, writer) =>
      run({ version: 2, status: "running", snapshot: { writer }, updatedAt: 2_000 + writer }),
    );
    const results = await Promise.all(attempts.map((attempt) => store.saveRun(attempt)));
    expect(results.filter(Boolean)).toHaveLength(1);
    const winner = attempts[results.indexOf(true)];
    expect(await store.getRun("run-1")).toEqual(winner);
  });

  it("refuses a save that skips or repeats a version", async () => {
    const store = await dynamo.newStore();
    await store.createRun(run());
    expect(await store.saveRun(run({ version: 3 }))).toBe(false);
    expect(await store.saveRun(run({ version: 2, status: "running" }))).toBe(true);
    expect(await store.saveRun(run({ version: 2, status: "failed" }))).toBe(false);
    expect((await store.getRun("run-1"))?.status).toBe("running");
  });

  it("does not save a run that was never created", async () => {
    const store = await dynamo.newStore();
    expect(await store.saveRun(run({ runId: "ghost", version: 2 }))).toBe(false);
    expect(await store.getRun("ghost")).toBeUndefined();
  });

  it("rejects versions a run can never have, with a typed error", async () => {
    const store = await dynamo.newStore();
    await expect(store.createRun(run({ version: 2 }))).rejects.toMatchObject({
      code: "invalid_argument",
      message: "A new run starts at version 1, not 2",
    });
    await expect(store.saveRun(run({ version: 1 }))).rejects.toBeInstanceOf(StoreError);
  });

  it("lists a repository's runs newest first, and only that repository's", async () => {
    const store = await dynamo.newStore();
    await store.createRun(run({ runId: "a", createdAt: 3_000 }));
    await store.createRun(run({ runId: "b", createdAt: 1_000 }));
    await store.createRun(run({ runId: "c", createdAt: 2_000 }));
    await store.createRun(run({ runId: "other", repo: "octo/other", createdAt: 4_000 }));
    const listed = await store.listRuns("octo/app");
    expect(listed.map((r) => r.runId)).toEqual(["a", "c", "b"]);
    expect((await store.listRuns("octo/app", { limit: 2 })).map((r) => r.runId)).toEqual([
      "a",
      "c",
    ]);
    expect(await store.listRuns("octo/none")).toEqual([]);
  });

  it("lists active runs oldest first and drops a run once its status is final", async () => {
    const store = await dynamo.newStore();
    await store.createRun(run({ runId: "queued", createdAt: 3_000 }));
    await store.createRun(run({ runId: "running", repo: "octo/b", createdAt: 1_000 }));
    await store.createRun(run({ runId: "waiting", createdAt: 2_000 }));
    await store.createRun(run({ runId: "done", createdAt: 500 }));
    await store.saveRun(run({ runId: "running", repo: "octo/b", version: 2, status: "running" }));
    await store.saveRun(run({ runId: "waiting", version: 2, status: "awaiting_input" }));
    for (const [runId, status] of [
      ["done", "succeeded"],
      ["queued", "failed"],
    ] as const) {
      const current = await store.getRun(runId);
      expect(current).toBeDefined();
      if (current) await store.saveRun({ ...current, version: current.version + 1, status });
    }
    const active = await store.listActiveRuns();
    expect(active.map((r) => [r.runId, r.status])).toEqual([
      ["waiting", "awaiting_input"],
      ["running", "running"],
    ]);
    expect((await store.listActiveRuns({ limit: 1 })).map((r) => r.runId)).toEqual(["waiting"]);
    expect((await store.listActiveRuns({ repo: "octo/b" })).map((r) => r.runId)).toEqual([
      "running",
    ]);
    // A finished run whose outbox is not cleared yet is for recovery to complete.
    expect((await store.listActiveRunHeads({ owing: true })).map((r) => r.runId).sort()).toEqual([
      "done",
      "queued",
      "running",
      "waiting",
    ]);
    // Finished runs stay listed under their repository.
    expect((await store.listRuns("octo/app")).map((r) => r.runId)).toEqual([
      "queued",
      "waiting",
      "done",
    ]);
  });

  it("lists one repository's active runs, oldest first, not another's that shares a prefix", async () => {
    const store = await dynamo.newStore();
    await store.createRun(run({ runId: "newer", repo: "/w/a", createdAt: 2_000 }));
    await store.createRun(run({ runId: "older", repo: "/w/a", createdAt: 1_000 }));
    await store.createRun(run({ runId: "hash", repo: "/w/a#b", createdAt: 500 }));
    expect((await store.listActiveRuns({ repo: "/w/a" })).map((r) => r.runId)).toEqual([
      "older",
      "newer",
    ]);
    expect((await store.listActiveRuns({ repo: "/w/a#b" })).map((r) => r.runId)).toEqual(["hash"]);
    expect(await store.listActiveRuns({ repo: "/w/none" })).toEqual([]);
    // The heads list the same runs with their listing fields only, no snapshot or outbox.
    expect(await store.listActiveRunHeads({ repo: "/w/a" })).toEqual([
      {
        runId: "older",
        repo: "/w/a",
        workflow: ".clustercode/fix.yml",
        status: "queued",
        createdAt: 1_000,
      },
      {
        runId: "newer",
        repo: "/w/a",
        workflow: ".clustercode/fix.yml",
        status: "queued",
        createdAt: 2_000,
      },
    ]);
    expect((await store.listActiveRunHeads()).map((r) => r.runId).sort()).toEqual([
      "hash",
      "newer",
      "older",
    ]);
  });

  it("lists every run of an issue, newest first, however many runs the repository has", async () => {
    const store = await dynamo.newStore();
    await store.createRun(run({ runId: "first", issue: 7, createdAt: 1 }));
    for (let i = 0; i < 120; i++)
      await store.createRun(run({ runId: `other-${i}`, issue: 8, createdAt: 10 + i }));
    await store.createRun(run({ runId: "second", issue: 7, createdAt: 500 }));
    await store.saveRun(
      run({ runId: "first", issue: 7, createdAt: 1, version: 2, status: "failed" }),
    );
    const runs = await store.listRunsOfIssue("octo/app", 7);
    expect(runs.map((r) => [r.runId, r.status, r.issue])).toEqual([
      ["second", "queued", 7],
      ["first", "failed", 7],
    ]);
    expect(await store.listRunsOfIssue("octo/app", 9)).toEqual([]);
    expect(await store.listRunsOfIssue("octo/other", 7)).toEqual([]);
    expect(await store.listRunsOfIssue("octo/app", 8)).toHaveLength(120);
  });

  it("lists a run once when a refused create left a second link to it", async () => {
    const store = await dynamo.newStore();
    await store.createRun(run({ runId: "kept", issue: 3 }));
    // A second create of the same id is refused after its link was written: the link is
    // harmless, the run is listed once.
    expect(await store.createRun(run({ runId: "kept", issue: 3, createdAt: 9_000 }))).toBe(false);
    await store.createRun(run({ runId: "newer", issue: 3, createdAt: 5_000 }));
    expect((await store.listRunsOfIssue("octo/app", 3)).map((r) => r.runId)).toEqual([
      "newer",
      "kept",
    ]);
  });

  it("keeps each repository's schedules, lists them all, and removes an empty list", async () => {
    const store = await dynamo.newStore();
    const nightly = {
      workflow: "ship",
      id: "ship#0 6 * * *#UTC",
      cron: "0 6 * * *",
      timezone: "UTC",
      since: 5,
    };
    await store.putSchedules({ repo: "octo/a", defaultBranch: "main", schedules: [nightly] });
    await store.putSchedules({
      repo: "octo/b",
      defaultBranch: "trunk",
      schedules: [{ ...nightly, brief: "Nightly" }],
    });
    expect(await store.getSchedules("octo/a")).toEqual({
      repo: "octo/a",
      defaultBranch: "main",
      schedules: [nightly],
    });
    expect((await store.listSchedules()).map((r) => r.repo)).toEqual(["octo/a", "octo/b"]);
    await store.putSchedules({ repo: "octo/a", defaultBranch: "main", schedules: [] });
    expect(await store.getSchedules("octo/a")).toBeUndefined();
    expect((await store.listSchedules()).map((r) => r.repo)).toEqual(["octo/b"]);
  });

  it("keeps admission's pause in the store", async () => {
    const store = await dynamo.newStore();
    expect((await store.admissionState("octo/app#ship")).paused).toBe(false);
    await store.setAdmissionPaused("octo/app#ship", true);
    expect((await store.admissionState("octo/app#ship")).paused).toBe(true);
    expect((await store.admissionState("octo/app#other")).paused).toBe(false);
    await store.setAdmissionPaused("octo/app#ship", false);
    expect((await store.admissionState("octo/app#ship")).paused).toBe(false);
  });

  it("keeps admission's roster beside its pause: entries set, removed and rebuilt", async () => {
    const store = await dynamo.newStore();
    const scope = "octo/app#ship";
    expect((await store.admissionState(scope)).roster).toBeUndefined();
    await store.rebuildRoster(scope, [{ runId: "old", status: "running", createdAt: 1 }]);
    await store.setAdmissionPaused(scope, true);
    await store.noteInRoster(scope, "a#1", { runId: "a#1", status: "queued", createdAt: 5 });
    await store.noteInRoster(scope, "b", { runId: "b", status: "awaiting_input", createdAt: 6 });
    await store.noteInRoster(scope, "a#1", { runId: "a#1", status: "running", createdAt: 5 });
    await store.noteInRoster(scope, "gone", undefined);
    const state = await store.admissionState(scope);
    expect(state.paused).toBe(true);
    expect(state.roster?.sort((x, y) => x.createdAt - y.createdAt)).toEqual([
      { runId: "old", status: "running", createdAt: 1 },
      { runId: "a#1", status: "running", createdAt: 5 },
      { runId: "b", status: "awaiting_input", createdAt: 6 },
    ]);
    await store.noteInRoster(scope, "b", undefined);
    await store.rebuildRoster(scope, [{ runId: "new", status: "queued", createdAt: 9 }]);
    expect(await store.admissionState(scope)).toEqual({
      paused: true,
      roster: [{ runId: "new", status: "queued", createdAt: 9 }],
    });
  });

  it("keeps what the app last wrote to a run's surfaces beside the run, apart from its item", async () => {
    const store = await dynamo.newStore();
    await store.createRun(run());
    expect(await store.getSurfaceMemo("run-1")).toBeUndefined();
    const memo = { v: 1, comments: [["<!-- m -->", 7]], checks: [], listed: true };
    await store.putSurfaceMemo("run-1", memo);
    expect(await store.getSurfaceMemo("run-1")).toEqual(memo);
    // The run item (and its version) is not touched: a transition's condition still holds.
    expect(await store.getRun("run-1")).toEqual(run());
    expect(await store.saveRun(run({ version: 2, status: "running" }))).toBe(true);
  });

  it("writes a transition as one PutItem request", async () => {
    const requests: string[] = [];
    const store = await dynamo.newStore({ onRequest: (name) => requests.push(name) });
    await store.createRun(run());
    requests.length = 0;
    await store.saveRun(run({ version: 2, status: "running" }));
    expect(requests).toEqual(["PutItem"]);
  });

  it("names a run's repository through the run repository, without decoding its snapshot", async () => {
    const store = await dynamo.newStore();
    await store.createRun(run());
    const runs = new RunRepository(store);
    // This record's snapshot is no run document: reading the repository needs none.
    expect(await runs.repoOf("run-1")).toBe("octo/app");
    expect(await runs.repoOf("missing")).toBeUndefined();
    await expect(runs.get("run-1")).rejects.toMatchObject({ code: "corrupt_record" });
  });
});
