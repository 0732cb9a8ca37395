import { afterEach, describe, expect, it, vi } from "vitest";
import { AppError } from "../../../src/errors/app-error.js";
import { Batcher } from "../../../src/runtime/concurrency/batcher.js";

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((res) => (resolve = res));
  return { promise, resolve };
}

/** A batcher whose writes are recorded, each held until released. */
function recording(options: { full: number; windowMs: number; most?: number; writes?: number }) {
  const groups: number[][] = [];
  const gates: { resolve: () => void }[] = [];
  const batcher = new Batcher<number, string>({
    ...options,
    write: async (items) => {
      groups.push(items);
      const gate = deferred();
      gates.push(gate);
      await gate.promise;
      return items.map((item) => `wrote ${item}`);
    },
  });
  return { batcher, groups, gates };
}

afterEach(() => vi.useRealTimers());

describe("Batcher", () => {
  it("writes alone at once when quiet, and groups what arrives during a write", async () => {
    const { batcher, groups, gates } = recording({ full: 25, windowMs: 0, most: 25 });
    const first = batcher.add(1);
    const later = [2, 3, 4].map((item) => batcher.add(item));
    expect(groups).toEqual([[1]]);
    gates[0]?.resolve();
    await expect(first).resolves.toBe("wrote 1");
    await vi.waitFor(() => expect(groups).toEqual([[1], [2, 3, 4]]));
    gates[1]?.resolve();
    await expect(Promise.all(later)).resolves.toEqual(["wrote 2", "wrote 3", "wrote 4"]);
  });

  it("waits for its window, or writes at once when the group is full", async () => {
    vi.useFakeTimers();
    const { batcher, groups, gates } = recording({ full: 3, windowMs: 10 });
    void batcher.add(1);
    void batcher.add(2);
    expect(groups).toEqual([]);
    await vi.advanceTimersByTimeAsync(10);
    expect(groups).toEqual([[1, 2]]);
    gates[0]?.resolve();
    for (const item of [3, 4, 5]) void batcher.add(item);
    await vi.advanceTimersByTimeAsync(0);
    expect(groups).toEqual([
      [1, 2],
      [3, 4, 5],
    ]);
    gates[1]?.resolve();
    await batcher.idle();
  });

  it("keeps one write in flight unless full groups wait", async () => {
    const { batcher, groups, gates } = recording({ full: 2, windowMs: 0, most: 2, writes: 2 });
    void batcher.add(1);
    void batcher.add(2);
    // One write (of 1) in flight; a full group (2, 3) starts a second; 4 waits.
    void batcher.add(3);
    void batcher.add(4);
    expect(groups).toEqual([[1], [2, 3]]);
    for (const gate of gates) gate.resolve();
    await vi.waitFor(() => expect(groups).toEqual([[1], [2, 3], [4]]));
    gates[2]?.resolve();
    await batcher.idle();
    expect(batcher.busy()).toBe(false);
  });

  it("writes its window's group at once when asked to be idle", async () => {
    vi.useFakeTimers();
    const batcher = new Batcher<number, number>({
      full: 25,
      windowMs: 60_000,
      write: (items) => Promise.resolve(items),
    });
    const written = batcher.add(9);
    await batcher.idle();
    await expect(written).resolves.toBe(9);
  });

  it("fails only the item a store refuses, and the whole group when it may retry", async () => {
    const refused = new AppError("invalid_request", "item too large", { retryable: false });
    const throttled = new AppError("throttled", "slow down", { retryable: true });
    let outage = false;
    const batcher = new Batcher<number, number>({
      full: 25,
      windowMs: 10,
      write: (items) => {
        if (outage) return Promise.reject(throttled);
        return items.includes(13) ? Promise.reject(refused) : Promise.resolve(items);
      },
    });
    const results = await Promise.allSettled([12, 13, 14].map((item) => batcher.add(item)));
    expect(results.map((result) => result.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    outage = true;
    const retried = await Promise.allSettled([1, 2].map((item) => batcher.add(item)));
    expect(retried).toEqual([
      { status: "rejected", reason: throttled },
      { status: "rejected", reason: throttled },
    ]);
  });
});
