import { describe, expect, it } from "vitest";
import { KeyedQueue } from "../../../src/runtime/concurrency/keyed-queue.js";

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((res) => (resolve = res));
  return { promise, resolve };
}

describe("KeyedQueue", () => {
  it("runs one key's work in order, after a failure too, and other keys side by side", async () => {
    const queue = new KeyedQueue();
    const order: string[] = [];
    const gate = deferred();
    const a1 = queue.run("a", async () => {
      await gate.promise;
      order.push("a1");
      throw new Error("a1 failed");
    });
    const a2 = queue.run("a", () => Promise.resolve(order.push("a2")));
    await queue.run("b", () => Promise.resolve(order.push("b1")));
    expect(order).toEqual(["b1"]);
    gate.resolve();
    await expect(a1).rejects.toThrow("a1 failed");
    await a2;
    expect(order).toEqual(["b1", "a1", "a2"]);
    expect(queue.busy()).toBe(false);
  });

  it("folds a burst of coalesced requests into one run after the one under way", async () => {
    const queue = new KeyedQueue();
    const gate = deferred();
    let runs = 0;
    const work = async () => {
      runs++;
      await gate.promise;
    };
    const first = queue.coalesce("run-1", work);
    await Promise.resolve();
    // The first has started: these wait behind it, as one.
    const burst = [1, 2, 3].map(() => queue.coalesce("run-1", work));
    expect(new Set(burst).size).toBe(1);
    gate.resolve();
    await Promise.all([first, ...burst]);
    expect(runs).toBe(2);
    await queue.idle();
    expect(queue.has("run-1")).toBe(false);
  });

  it("waits in idle until the work queued meanwhile is done", async () => {
    const queue = new KeyedQueue();
    let done = 0;
    void queue.run("a", () => {
      done++;
      void queue.run("a", () => Promise.resolve(done++));
      return Promise.resolve();
    });
    await queue.idle();
    expect(done).toBe(2);
  });

  it("waits in idleOf for one key's work, queued meanwhile too, not for other keys", async () => {
    const queue = new KeyedQueue();
    const other = deferred();
    void queue.run("b", () => other.promise);
    let done = 0;
    void queue.run("a", () => {
      void queue.run("a", () => Promise.resolve(done++));
      return Promise.resolve(done++);
    });
    await queue.idleOf("a");
    expect(done).toBe(2);
    expect(queue.has("b")).toBe(true);
    other.resolve();
    await queue.idle();
  });

  it("lets requests join coalesced work until its settle step is over", async () => {
    const queue = new KeyedQueue();
    const settled = deferred();
    let runs = 0;
    const work = () => Promise.resolve(void runs++);
    const first = queue.coalesce("run-1", work, () => settled.promise);
    await Promise.resolve();
    // Its turn has come, but it still settles (a debounce): a request now is served by it.
    expect(queue.waits("run-1")).toBe(true);
    expect(queue.coalesce("run-1", work)).toBe(first);
    settled.resolve();
    await first;
    expect(runs).toBe(1);
    expect(queue.waits("run-1")).toBe(false);
    await queue.idle();
    expect(queue.has("run-1")).toBe(false);
  });
});
