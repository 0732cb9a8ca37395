import { ScanCommand } from "@aws-sdk/client-dynamodb";
import { writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { Item } from "../../src/store/dynamo-attributes.js";
import { itemSize } from "../../src/store/dynamo-limits.js";
import { DynamoStore } from "../../src/store/dynamo-store.js";
import { InstantWorld } from "../helpers/instant-world.js";
import { definitionOf, workflowOf } from "../engine/harness.js";
import { useTestDynamo } from "../store/dynalite-fixture.js";

const dynamo = useTestDynamo();

/** The largest issue body GitHub allows, in CJK text: 3 bytes of UTF-8 a character. */
const CJK_BRIEF = "ログイン画面が壊れている。".repeat(6_000).slice(0, 65_536);
/** A gate's output tail as long as a DevBox keeps (64 KB), in CJK text. */
const GATE_OUTPUT = "テスト失敗。".repeat(4_000).slice(0, 21_800);

// 6 visits of a 50-iteration loop (one, then 5 back-edge traversals): 300 iterations, each gate
// failing with a full output tail that feeds the next iteration.
const grind = workflowOf(`version: 1
name: grind
on: { label: go }
nodes:
  work:
    kind: loop
    goal: Make the tests pass.
    agent: { engine: claude }
    gates: [{ name: tests, run: npm test }]
    budget: { max_iterations: 50 }
  again:
    kind: decision
    evaluator: status
edges:
  - { from: work, to: again }
  - { from: again, to: work, label: exhausted, back: true, max_traversals: 5 }
  - { from: again, to: done, label: default }
`);

const once = workflowOf(`version: 1
name: once
on: { label: go }
nodes:
  fix: { kind: run, agent: { engine: claude }, prompt: Fix it. }
`);

async function scanAll(store: DynamoStore): Promise<Item[]> {
  const items: Item[] = [];
  let start: Item | undefined;
  for (let page = 0; page < 1_000; page++) {
    const found = await dynamo.client.send(
      new ScanCommand({ TableName: store.table, ExclusiveStartKey: start }),
    );
    items.push(...(found.Items ?? []));
    start = found.LastEvaluatedKey;
    if (start === undefined) break;
  }
  return items;
}

describe("a run's items stay within DynamoDB's limits", () => {
  it("a 300-iteration loop with a 65,536-character CJK brief keeps every item under 350 KB", async () => {
    const store = await dynamo.newStore();
    const world = new InstantWorld({
      store,
      repository: "/nowhere",
      exit: (request) => (request.command.type === "script" ? 1 : 0),
      output: (request) => (request.command.type === "script" ? GATE_OUTPUT : ""),
    });
    const definition = definitionOf(grind, { runId: "grind", brief: CJK_BRIEF });
    await world.runtime.start(definition, { repo: "acme/app" });
    const { state } = await world.settled("grind", 120_000);
    expect(world.errors).toEqual([]);
    expect(state.visits.filter((visit) => visit.node === "work")).toHaveLength(6);
    expect(state.visits.reduce((sum, visit) => sum + (visit.iterations ?? 0), 0)).toBe(300);

    const items = await scanAll(store);
    const largest = Math.max(...items.map(itemSize));
    expect(largest).toBeLessThan(350 * 1024);
    const runItem = items.find((item) => item.sk?.S === "RUN");
    expect(itemSize(runItem ?? {})).toBeLessThan(64 * 1024);
    // bench/largest-item.js reads the figures from here.
    const report = process.env.CLUSTERCODE_BENCH_LARGEST_ITEM;
    if (report) writeFileSync(report, JSON.stringify({ largest, run: itemSize(runItem ?? {}) }));
    // The brief reaches every agent turn whole, from its blob.
    const dispatches = world.performed.filter((effect) => effect.type === "command.dispatch");
    expect(dispatches.every((effect) => effect.request.files?.brief === CJK_BRIEF)).toBe(true);
    // About 1,200 transitions: seconds alone, longer on a loaded CI machine.
  }, 120_000);

  it("keeps a run's pinned definition beside the run item: a transition writes the state", async () => {
    const store = await dynamo.newStore();
    const world = new InstantWorld({ store });
    const brief = "The login page rejects valid passwords. ".repeat(20);
    const definition = definitionOf(grind, { runId: "pinned", brief });
    const text = JSON.stringify(definition);
    expect(Buffer.byteLength(text)).toBeGreaterThan(1024);
    await world.runtime.start(definition, { repo: "acme/app" });
    const settled = await world.settled("pinned", 60_000);
    expect(settled.definition).toEqual(definition);
    expect(settled.state.status).toBe("succeeded");

    const items = await scanAll(store);
    const runItem = items.find((item) => item.sk?.S === "RUN") ?? {};
    const snapshot = JSON.parse(runItem.snapshot?.S ?? "{}") as { definition?: { $blob?: string } };
    expect(snapshot.definition?.$blob).toMatch(/^[0-9a-f]{64}\/1$/);
    const blobs = items.filter((item) => item.sk?.S?.startsWith("BLOB#"));
    expect(blobs).toHaveLength(1);
    // Read back by another process, the run is whole.
    const again = new InstantWorld({
      store: new DynamoStore({ client: dynamo.client, table: store.table }),
      repository: "/nowhere",
    });
    expect((await again.runtime.load("pinned"))?.document.definition).toEqual(definition);
  });

  it("a run whose brief is 210,000 characters succeeds, its brief stored outside the run item", async () => {
    const store = await dynamo.newStore();
    const world = new InstantWorld({ store });
    const brief = "要件".repeat(105_000);
    await world.runtime.start(definitionOf(once, { runId: "long", brief }), { repo: "acme/app" });
    const { state, definition } = await world.settled("long");
    expect(state.status).toBe("succeeded");
    expect(definition.brief).toBe(brief);
    expect(Math.max(...(await scanAll(store)).map(itemSize))).toBeLessThan(350 * 1024);
  });
});
