import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { DeliveryIntake, livenessLease } from "../../src/github/intake/intake.js";
import { RuntimeError } from "../../src/runtime/runtime-error.js";
import { Runtime } from "../../src/runtime/runtime.js";
import { StoreError } from "../../src/store/store-error.js";
import type { DeliveryRecord, Store, StoredRun } from "../../src/store/store.js";
import { definitionOf, workflowOf } from "../engine/harness.js";
import { useTestDynamo } from "../store/dynalite-fixture.js";

const dynamo = useTestDynamo();

describe("delivery intake", () => {
  it("handles a delivery once even when a sweep runs while it is being handled", async () => {
    const store = await dynamo.newStore();
    const handled: string[] = [];
    let release: () => void = () => {};
    const slow = new Promise<void>((resolve) => (release = resolve));
    const intake = new DeliveryIntake({
      store,
      holder: "here",
      now: () => 1_000_000,
      staleMs: 0,
      handle: async (delivery: DeliveryRecord) => {
        handled.push(delivery.deliveryId);
        await slow;
      },
      onError: (error) => {
        throw error;
      },
    });
    expect(await intake.record("d1", "issues", { action: "labeled" })).toBe(true);
    expect(await intake.record("d1", "issues", { action: "labeled" })).toBe(false);
    // The sweep finds d1 unprocessed (it is still being handled) and must leave it alone.
    expect(await intake.sweep()).toBe(0);
    release();
    await intake.idle();
    expect(handled).toEqual(["d1"]);
    expect(await store.unprocessedDeliveries()).toEqual([]);
  });

  it("leaves a delivery whose handling failed for a retryable reason to the sweep", async () => {
    const store = await dynamo.newStore();
    const errors: unknown[] = [];
    let failures = 1;
    const intake = new DeliveryIntake({
      store,
      holder: "here",
      now: () => 1_000_000,
      staleMs: 0,
      handle: async () => {
        if (failures-- > 0) throw new StoreError("throttled", "slow down", { retryable: true });
        await Promise.resolve();
      },
      onError: (error) => errors.push(error),
    });
    await intake.record("d1", "issues", {});
    await intake.idle();
    expect(errors).toHaveLength(1);
    expect((await store.unprocessedDeliveries()).map((d) => d.deliveryId)).toEqual(["d1"]);
    expect(await intake.sweep()).toBe(1);
    await intake.idle();
    expect(await store.unprocessedDeliveries()).toEqual([]);
  });

  it("keeps an /approve whose run stayed contended for the sweep, and applies it then", async () => {
    const store = await dynamo.newStore();
    const workflow = workflowOf(
      "version: 1\nname: gate\non: { label: go }\nnodes:\n  ok: { kind: approval }\n",
    );
    const performer = { perform: () => Promise.resolve(null) };
    const now = () => 1_000_000;
    await new Runtime({ store, performer, now }).start(definitionOf(workflow), { repo: "a/b" });
    // Another writer wins every race for the run while `contended` is on: each of this
    // process's conditional writes finds a newer version.
    let contended = true;
    const racing = new Proxy(store, {
      get(target, name: keyof Store) {
        if (name !== "saveRun") return (target[name] as () => unknown).bind(target);
        return async (run: StoredRun) => {
          const current = contended ? await target.getRun(run.runId) : undefined;
          if (current !== undefined) {
            await target.saveRun({ ...current, version: current.version + 1 });
          }
          return target.saveRun(run);
        };
      },
    });
    const runtime = new Runtime({ store: racing, performer, now });
    const errors: unknown[] = [];
    const intake = new DeliveryIntake({
      store,
      holder: "here",
      now,
      staleMs: 0,
      handle: async () => {
        await runtime.deliver("r1", {
          type: "approval.answer",
          decision: "approved",
          actor: "bob",
          at: now(),
        });
      },
      onError: (error) => errors.push(error),
    });
    await intake.record("approve", "issue_comment", { comment: { body: "/approve" } });
    await intake.idle();
    expect(errors).toEqual([expect.any(RuntimeError)]);
    expect(errors[0]).toMatchObject({ code: "write-conflict", retryable: true });
    // Not marked processed: the approval is not lost.
    expect((await store.unprocessedDeliveries()).map((d) => d.deliveryId)).toEqual(["approve"]);
    expect((await store.getRun("r1"))?.status).toBe("awaiting_input");

    contended = false;
    expect(await intake.sweep()).toBe(1);
    await intake.idle();
    expect(errors).toHaveLength(1);
    expect(await store.unprocessedDeliveries()).toEqual([]);
    expect((await store.getRun("r1"))?.status).toBe("succeeded");
  });

  it("marks deliveries that queued up processed in groups, not one request each", async () => {
    const requests: string[] = [];
    const store = await dynamo.newStore({ onRequest: (name) => requests.push(name) });
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const intake = new DeliveryIntake({
      store,
      holder: "here",
      now: () => 1_000_000,
      handle: () => held,
      onError: (error) => {
        throw error;
      },
    });
    for (let i = 0; i < 30; i++) await intake.record(`d${i}`, "issues", {});
    requests.length = 0;
    release();
    await intake.idle();
    // The first marked alone; the rest, handled while that write was under way, together
    // (a BatchWriteItem takes at most 25). The PutItems claim the deliveries not yet started,
    // and the lanes finish them at different moments, so a few more groups than the minimum.
    const marks = requests.filter((name) => name !== "PutItem");
    expect(marks.every((name) => name === "BatchWriteItem")).toBe(true);
    expect(marks.length).toBeLessThanOrEqual(10);
    expect(await store.unprocessedDeliveries()).toEqual([]);
  });

  it("marks handled deliveries 25 at a time, or once the window passes, or when idle", async () => {
    const requests: string[] = [];
    const store = await dynamo.newStore({ onRequest: (name) => requests.push(name) });
    const handled: string[] = [];
    const intake = new DeliveryIntake({
      store,
      holder: "here",
      now: () => 1_000_000,
      markWindowMs: 60_000,
      handle: (delivery) => {
        handled.push(delivery.deliveryId);
        return Promise.resolve();
      },
      onError: (error) => {
        throw error;
      },
    });
    // One at a time, as a steady trickle arrives: each is handled before the next comes.
    for (let i = 0; i < 30; i++) {
      await intake.record(`d${i}`, "issues", {});
      for (let t = 0; t < 400 && handled.length <= i; t++) await sleep(5);
    }
    for (let t = 0; t < 400 && handled.length < 30; t++) await sleep(25);
    expect(handled).toHaveLength(30);
    // The first 25 share one write; the other 5 wait for the window, or for idle().
    const unprocessed = async () => (await store.unprocessedDeliveries()).length;
    for (let t = 0; t < 400 && (await unprocessed()) > 5; t++) await sleep(25);
    expect(await unprocessed()).toBe(5);
    expect(requests.filter((name) => name === "BatchWriteItem")).toEqual(["BatchWriteItem"]);
    await intake.idle();
    expect(requests.filter((name) => name === "BatchWriteItem")).toHaveLength(2);
    expect(await store.unprocessedDeliveries()).toEqual([]);
  });

  it("marks a handled delivery processed while the next one is still being handled", async () => {
    const store = await dynamo.newStore();
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const intake = new DeliveryIntake({
      store,
      holder: "here",
      now: () => 1_000_000,
      // d0 finishes once d1 and d2 are queued behind it; d1 never finishes (a hung GitHub
      // call): d0 must be marked all the same, and d2 (another lane) handled and marked.
      handle: (delivery) => (delivery.deliveryId === "d1" ? new Promise<void>(() => {}) : gate),
      onError: (error) => {
        throw error;
      },
    });
    await intake.record("d0", "issues", {});
    await intake.record("d1", "issues", {});
    await intake.record("d2", "issues", {});
    release();
    const left = async () => (await store.unprocessedDeliveries()).map((d) => d.deliveryId);
    for (let i = 0; i < 100 && (await left()).length > 1; i++) await sleep(20);
    expect(await left()).toEqual(["d1"]);
  });

  it("leaves another process's deliveries to it while it lives, and takes them once it is gone", async () => {
    const store = await dynamo.newStore();
    let clock = 1_000_000;
    const handled: string[] = [];
    const intake = (holder: string, handle: () => Promise<void>) =>
      new DeliveryIntake({
        store,
        holder,
        now: () => clock,
        handle: async (delivery) => {
          handled.push(`${holder}:${delivery.deliveryId}`);
          await handle();
        },
        onError: (error) => {
          throw error;
        },
      });
    // Process a records d1 and is stuck handling it (a slow GitHub, a long lock wait).
    const a = intake("a", () => new Promise<void>(() => {}));
    const b = intake("b", () => Promise.resolve());
    await a.start(60_000);
    try {
      await a.record("d1", "issues", {});
      clock += 61_000;
      // Stale, but a is alive (its liveness lease runs five periods, 5 minutes, from its start).
      expect(await b.sweep()).toBe(0);
      clock += 10 * 60_000;
      // a's lease lapsed: it is gone, and b takes its delivery over.
      expect(await b.sweep()).toBe(1);
      await b.idle();
      expect(handled).toEqual(["a:d1", "b:d1"]);
      expect(await store.unprocessedDeliveries()).toEqual([]);
    } finally {
      a.stop();
    }
  });

  it("takes a dead replica's deliveries over within seconds, never a live one's, on the defaults", async () => {
    const store = await dynamo.newStore();
    let clock = 1_000_000;
    const handled: string[] = [];
    const intake = (holder: string, handle: () => Promise<void>) =>
      new DeliveryIntake({
        store,
        holder,
        now: () => clock,
        handle: async (delivery) => {
          handled.push(`${holder}:${delivery.deliveryId}`);
          await handle();
        },
        onError: (error) => {
          throw error;
        },
      });
    // a acknowledges two deliveries and is busy with both (a slow GitHub, a long lock wait).
    const a = intake("a", () => new Promise<void>(() => {}));
    const b = intake("b", () => Promise.resolve());
    await a.heartbeat();
    await a.record("busy", "issues", {});
    await a.record("left", "issues", {});
    // A minute of work while its heartbeats go on, one a second: b's sweeps leave both alone.
    for (let second = 0; second < 60; second++) {
      clock += 1_000;
      await a.heartbeat();
      expect(await b.sweep()).toBe(0);
    }
    // a dies just after its last heartbeat: its deliveries are b's within six seconds.
    clock += 6_000;
    expect(await b.sweep()).toBe(2);
    await b.idle();
    expect(handled.filter((h) => h.startsWith("b:")).sort()).toEqual(["b:busy", "b:left"]);
    expect(await store.unprocessedDeliveries()).toEqual([]);
  });

  it("takes a delivery over from its dead claimer though its recorder lives, never from a live claimer", async () => {
    const store = await dynamo.newStore();
    let clock = 1_000_000;
    const handled: string[] = [];
    const intake = (holder: string) =>
      new DeliveryIntake({
        store,
        holder,
        now: () => clock,
        handle: (delivery) => {
          handled.push(`${holder}:${delivery.deliveryId}`);
          return Promise.resolve();
        },
        onError: (error) => {
          throw error;
        },
      });
    // a recorded both deliveries; b and e claimed one each (copies sent to them, or a
    // takeover) and are busy with them. a lives throughout.
    const [a, b, e, c, d] = [intake("a"), intake("b"), intake("e"), intake("c"), intake("d")];
    const beat = async (...alive: DeliveryIntake[]) => {
      for (const replica of alive) await replica.heartbeat();
    };
    await beat(a, b, e);
    for (const id of ["left", "busy"]) {
      await store.recordDelivery({
        deliveryId: id,
        event: "issues",
        payload: {},
        receivedAt: clock,
        receivedBy: "a",
      });
    }
    expect(await store.claimDelivery("left", "b", clock)).toBe(true);
    expect(await store.claimDelivery("busy", "e", clock)).toBe(true);
    // A minute of work while all three heartbeat: c's sweeps leave both to their claimers.
    for (let second = 0; second < 60; second++) {
      clock += 1_000;
      await beat(a, b, e);
      expect(await c.sweep()).toBe(0);
    }
    // b dies; a and e go on. Within six seconds, b's delivery is taken over, once, though
    // two replicas sweep for it at the same moment; e's stays e's.
    for (let second = 0; second < 6; second++) {
      clock += 1_000;
      await beat(a, e);
    }
    await Promise.all([c.sweep(), d.sweep()]);
    await Promise.all([c.idle(), d.idle()]);
    expect(handled).toHaveLength(1);
    expect(handled[0]).toMatch(/^[cd]:left$/);
    expect((await store.unprocessedDeliveries()).map((found) => found.deliveryId)).toEqual([
      "busy",
    ]);
    expect(await store.claimDelivery("busy", "e", clock)).toBe(true);
  });

  it("takes over a delivery left for longer than abandonMs, even from a live process", async () => {
    const store = await dynamo.newStore();
    const clock = { now: 1_000_000 };
    const stuck = new DeliveryIntake({
      store,
      holder: "stuck",
      now: () => clock.now,
      handle: () => new Promise<void>(() => {}),
      onError: () => undefined,
    });
    await stuck.start(3_600_000);
    const rescuer = new DeliveryIntake({
      store,
      holder: "rescuer",
      now: () => clock.now,
      abandonMs: 5 * 60_000,
      handle: () => Promise.resolve(),
      onError: (error) => {
        throw error;
      },
    });
    try {
      await stuck.record("d1", "issues", {});
      clock.now += 2 * 60_000;
      expect(await rescuer.sweep()).toBe(0);
      clock.now += 4 * 60_000;
      expect(await rescuer.sweep()).toBe(1);
      await rescuer.idle();
      expect(await store.unprocessedDeliveries()).toEqual([]);
    } finally {
      stuck.stop();
    }
  });
});

describe("the delivery sweep", () => {
  it("pages past deliveries a live replica is busy with to those a gone replica left", async () => {
    const store = await dynamo.newStore();
    const now = 1_000_000;
    const record = (id: string, receivedBy: string, receivedAt: number) =>
      store.recordDelivery({
        deliveryId: id,
        event: "issues",
        payload: {},
        receivedAt,
        receivedBy,
      });
    // 150 older deliveries of a replica that is alive (it holds its liveness lease)...
    await store.acquireLease(livenessLease("busy"), "busy", now, 60_000);
    for (let i = 0; i < 150; i++) await record(`busy-${i}`, "busy", now - 300_000 + i);
    // ...and 5 newer ones of a replica that is gone (no lease).
    for (let i = 0; i < 5; i++) await record(`gone-${i}`, "gone", now - 100_000 + i);
    const handled: string[] = [];
    const intake = new DeliveryIntake({
      store,
      holder: "here",
      now: () => now,
      handle: (delivery) => {
        handled.push(delivery.deliveryId);
        return Promise.resolve();
      },
      onError: (error) => {
        throw error;
      },
    });
    expect(await intake.sweep()).toBe(5);
    await intake.idle();
    expect(handled.sort()).toEqual(["gone-0", "gone-1", "gone-2", "gone-3", "gone-4"]);
  });
});

describe("the bounded intake queue", () => {
  it("acknowledges deliveries past the limit, keeps them in the store, and handles each once", async () => {
    const store = await dynamo.newStore();
    const handled: string[] = [];
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const intake = new DeliveryIntake({
      store,
      holder: "here",
      now: () => 1_000_000,
      queueLimit: 2,
      lanes: 1,
      handle: async (delivery) => {
        handled.push(delivery.deliveryId);
        await gate;
      },
      onError: (error) => {
        throw error;
      },
    });
    // d0 is being handled, d1 and d2 fill the queue, d3 and d4 wait in the store.
    for (let i = 0; i < 5; i++) expect(await intake.record(`d${i}`, "issues", {})).toBe(true);
    expect(intake.depth).toBe(2);
    expect((await store.unprocessedDeliveries()).map((d) => d.deliveryId)).toEqual([
      "d0",
      "d1",
      "d2",
      "d3",
      "d4",
    ]);
    // No sweep is running: the queue pages them in itself once it has room, though they are
    // fresh and their receiver is alive.
    release();
    await intake.idle();
    expect(handled).toEqual(["d0", "d1", "d2", "d3", "d4"]);
    expect(await store.unprocessedDeliveries()).toEqual([]);
  });
});

describe("the bounded intake queue, when the store fails", () => {
  it("keeps the deliveries that waited in the store for the next sweep after a failed read", async () => {
    const store = await dynamo.newStore();
    let failing = true;
    const flaky = new Proxy(store, {
      get(target, name: keyof Store) {
        if (name !== "unprocessedDeliveries") return (target[name] as () => unknown).bind(target);
        return (limit?: number, after?: DeliveryRecord) =>
          failing
            ? Promise.reject(new StoreError("throttled", "slow down", { retryable: true }))
            : target.unprocessedDeliveries(limit, after);
      },
    });
    const handled: string[] = [];
    const errors: unknown[] = [];
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const intake = new DeliveryIntake({
      store: flaky,
      holder: "here",
      now: () => 1_000_000,
      queueLimit: 1,
      lanes: 1,
      handle: async (delivery) => {
        handled.push(delivery.deliveryId);
        await gate;
      },
      onError: (error) => errors.push(error),
    });
    // d0 is being handled, d1 queued, d2 waits in the store.
    for (let i = 0; i < 3; i++) expect(await intake.record(`d${i}`, "issues", {})).toBe(true);
    release();
    await intake.idle();
    // The reads that were to page d2 in failed: d2 is still unprocessed, not forgotten, and
    // the next sweep takes it though it is fresh.
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.map((error) => (error as Error).message)).toContain("slow down");
    expect(handled).toEqual(["d0", "d1"]);
    failing = false;
    expect(await intake.sweep()).toBe(1);
    await intake.idle();
    expect(handled).toEqual(["d0", "d1", "d2"]);
    expect(await store.unprocessedDeliveries()).toEqual([]);
  });
});

describe("group commit of deliveries", () => {
  it("records deliveries arriving together in shared writes, each flagged on its own", async () => {
    const requests: string[] = [];
    const store = await dynamo.newStore({ onRequest: (name) => requests.push(name) });
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const intake = new DeliveryIntake({
      store,
      holder: "here",
      now: () => 1_000_000,
      // Held, so that no delivery is marked processed (a BatchWriteItem too) while counting.
      handle: () => gate,
      onError: (error) => {
        throw error;
      },
    });
    const ids = Array.from({ length: 30 }, (_, i) => `d${i}`);
    // d3 twice in the same burst: the second copy is the duplicate.
    const flags = await Promise.all(
      [...ids, "d3"].map((id) => intake.record(id, "issues", { id })),
    );
    expect(flags).toEqual([...ids.map(() => true), false]);
    // The first alone (a conditional PutItem), the rest (arrived while it was written) in
    // groups of at most 25, each read and written in one request.
    expect(requests.filter((name) => name === "BatchWriteItem")).toHaveLength(2);
    expect(requests.filter((name) => name === "BatchGetItem")).toHaveLength(2);
    release();
    await intake.idle();
    // A redelivery of the whole burst is refused, not written again, and starts nothing.
    requests.length = 0;
    expect(await Promise.all(ids.map((id) => intake.record(id, "issues", {})))).toEqual(
      ids.map(() => false),
    );
    expect(requests.filter((name) => name === "BatchWriteItem")).toEqual([]);
  });

  it("answers a record only once its own group is durable", async () => {
    const store = await dynamo.newStore();
    const gates: (() => void)[] = [];
    const gated = new Proxy(store, {
      get(target, name: keyof Store) {
        if (name !== "recordDeliveries") return (target[name] as () => unknown).bind(target);
        return async (deliveries: DeliveryRecord[]) => {
          await new Promise<void>((resolve) => gates.push(resolve));
          return target.recordDeliveries(deliveries);
        };
      },
    });
    const intake = new DeliveryIntake({
      store: gated,
      holder: "here",
      now: () => 1_000_000,
      handle: () => Promise.resolve(),
      onError: (error) => {
        throw error;
      },
    });
    const answered: string[] = [];
    const first = intake.record("d1", "issues", {}).then(() => answered.push("d1"));
    const second = intake.record("d2", "issues", {}).then(() => answered.push("d2"));
    // d2 arrived while d1's write was in flight: it waits for the next group.
    expect(gates).toHaveLength(1);
    gates[0]?.();
    await first;
    expect(answered).toEqual(["d1"]);
    expect((await store.unprocessedDeliveries()).map((d) => d.deliveryId)).not.toContain("d2");
    for (let i = 0; i < 100 && gates.length < 2; i++) await sleep(10);
    gates[1]?.();
    await second;
    expect(answered).toEqual(["d1", "d2"]);
    await intake.idle();
  });

  it("starts no handling while a record is being written, and all of them after", async () => {
    const store = await dynamo.newStore();
    const gates: (() => void)[] = [];
    const gated = new Proxy(store, {
      get(target, name: keyof Store) {
        if (name !== "recordDeliveries") return (target[name] as () => unknown).bind(target);
        return async (deliveries: DeliveryRecord[]) => {
          await new Promise<void>((resolve) => gates.push(resolve));
          return target.recordDeliveries(deliveries);
        };
      },
    });
    const handled: string[] = [];
    const intake = new DeliveryIntake({
      store: gated,
      holder: "here",
      now: () => 1_000_000,
      handle: (delivery) => (handled.push(delivery.deliveryId), Promise.resolve()),
      onError: (error) => {
        throw error;
      },
    });
    const first = intake.record("d1", "issues", {});
    const second = intake.record("d2", "issues", {});
    gates[0]?.();
    expect(await first).toBe(true);
    // d1 is recorded and queued, d2's write is under way: d1 waits for it.
    for (let i = 0; i < 100 && gates.length < 2; i++) await sleep(10);
    await store.getRun("nothing"); // a round trip to the store, as a claim would take
    expect(handled).toEqual([]);
    gates[1]?.();
    expect(await second).toBe(true);
    await intake.idle();
    expect(handled.sort()).toEqual(["d1", "d2"]);
  });

  it("handles once two copies of a delivery that two replicas both recorded", async () => {
    const store = await dynamo.newStore();
    const handled: string[] = [];
    // Replica b's read raced past a's write: b rewrote the delivery and counts it as new.
    const racing = new Proxy(store, {
      get(target, name: keyof Store) {
        if (name !== "recordDeliveries") return (target[name] as () => unknown).bind(target);
        return async (deliveries: DeliveryRecord[]) => {
          await Promise.all(deliveries.map((d) => target.recordDelivery(d)));
          return deliveries.map(() => true);
        };
      },
    });
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const replica = (holder: string, on: Store) =>
      new DeliveryIntake({
        store: on,
        holder,
        now: () => 1_000_000,
        handle: async (delivery) => {
          handled.push(`${holder}:${delivery.deliveryId}`);
          await gate;
        },
        onError: (error) => {
          throw error;
        },
      });
    const a = replica("a", store);
    const b = replica("b", racing);
    expect(await a.record("d1", "issues", {})).toBe(true);
    expect(await b.record("d1", "issues", {})).toBe(true);
    release();
    await Promise.all([a.idle(), b.idle()]);
    expect(handled).toEqual(["a:d1"]);
    expect(await store.unprocessedDeliveries()).toEqual([]);
  });
});
