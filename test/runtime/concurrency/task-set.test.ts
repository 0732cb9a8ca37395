import { describe, expect, it } from "vitest";
import { idleAll, TaskSet } from "../../../src/runtime/concurrency/task-set.js";

/** A promise settled from outside. */
function deferred<T = void>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

describe("TaskSet", () => {
  it("waits for tasks added while it waits, and for failed ones too", async () => {
    const tasks = new TaskSet();
    const first = deferred();
    const second = deferred();
    void tasks.add(first.promise).then(() => void tasks.add(second.promise));
    let idle = false;
    const waiting = tasks.idle().then(() => (idle = true));
    first.resolve();
    await first.promise;
    await Promise.resolve();
    expect(idle).toBe(false);
    expect(tasks.size).toBe(1);
    second.reject(new Error("failed"));
    await waiting;
    expect(idle).toBe(true);
    expect(tasks.busy()).toBe(false);
  });

  it("hands back the task it keeps", async () => {
    const tasks = new TaskSet();
    await expect(tasks.add(Promise.resolve(7))).resolves.toBe(7);
  });
});

describe("idleAll", () => {
  it("waits again for a part that the work of a later part made busy", async () => {
    const runs = new TaskSet();
    const records = new TaskSet();
    const later = deferred();
    // A record that, once written, lets a run continue (as a transition follows its evidence).
    void records.add(later.promise.then(() => void runs.add(Promise.resolve())));
    const done = idleAll([runs, records]);
    later.resolve();
    await done;
    expect(runs.busy() || records.busy()).toBe(false);
  });
});
