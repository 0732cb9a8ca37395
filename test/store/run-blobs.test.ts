import { readFileSync } from "node:fs";
import { PutItemCommand, ScanCommand } from "@aws-sdk/client-dynamodb";
import { describe, expect, it } from "vitest";
import type { Item } from "../../src/store/dynamo-attributes.js";
import { itemSize } from "../../src/store/dynamo-limits.js";
import { DynamoStore } from "../../src/store/dynamo-store.js";
import type { StoredRun } from "../../src/store/store.js";
import { useTestDynamo } from "./dynalite-fixture.js";

const dynamo = useTestDynamo();

/** The largest issue body GitHub allows, in CJK: 196,608 bytes of UTF-8. */
const BRIEF = "漢字かな交じり文。".repeat(65_536 / 8).slice(0, 65_536);

function runWith(brief: string, version = 1): StoredRun {
  return {
    runId: "big",
    version,
    repo: "acme/app",
    workflow: "fix",
    status: "running",
    snapshot: { definition: { runId: "big", brief }, state: { runId: "big", note: "short" } },
    outbox: [{ type: "command.dispatch", seq: 3, request: { files: { brief } } }],
    createdAt: 1,
    updatedAt: version,
    issue: 7,
  };
}

async function scan(store: DynamoStore): Promise<Item[]> {
  const found = await dynamo.client.send(new ScanCommand({ TableName: store.table }));
  return found.Items ?? [];
}

describe("a run's large strings", () => {
  it("live in blob items beside the run, under 350 KB each, and read back whole", async () => {
    const store = await dynamo.newStore();
    expect(await store.createRun(runWith(BRIEF))).toBe(true);
    expect(await store.saveRun(runWith(BRIEF + "!", 2))).toBe(true);
    const items = await scan(store);
    const sizes = items.map(itemSize);
    expect(Math.max(...sizes)).toBeLessThan(350 * 1024);
    const runItem = items.find((item) => item.sk?.S === "RUN");
    expect(itemSize(runItem ?? {})).toBeLessThan(4 * 1024);
    expect(await store.getRun("big")).toEqual(runWith(BRIEF + "!", 2));
    expect(await store.listActiveRuns()).toEqual([runWith(BRIEF + "!", 2)]);
    expect(await store.listRunsOfIssue("acme/app", 7)).toEqual([runWith(BRIEF + "!", 2)]);
    // A store that has never seen the run (another replica) reads the blobs from the table.
    const cold = new DynamoStore({ client: dynamo.client, table: store.table });
    expect(await cold.listRuns("acme/app")).toEqual([runWith(BRIEF + "!", 2)]);
  });

  it("are written once: a transition that keeps the brief writes only the run item", async () => {
    const requests: string[] = [];
    const store = await dynamo.newStore({ onRequest: (name) => requests.push(name) });
    await store.createRun(runWith(BRIEF));
    requests.length = 0;
    await store.saveRun(runWith(BRIEF, 2));
    expect(requests).toEqual(["PutItem"]);
    const blobs = (await scan(store)).filter((item) => item.sk?.S?.startsWith("BLOB#"));
    expect(blobs.length).toBeGreaterThan(0);
    expect(new Set(blobs.map((item) => item.sk?.S?.split("#")[1])).size).toBe(1);
  });

  it("reads runs written before blobs, with their brief in the run item", async () => {
    const store = await dynamo.newStore();
    const fixture = new URL("./fixtures/run-item-2026-12.json", import.meta.url);
    const item = JSON.parse(readFileSync(fixture, "utf8")) as Item;
    await dynamo.client.send(new PutItemCommand({ TableName: store.table, Item: item }));
    const old = await store.getRun("old1");
    const snapshot = JSON.parse(item.snapshot?.S ?? "") as unknown;
    expect(old?.snapshot).toEqual(snapshot);
    expect(old).toMatchObject({ version: 3, status: "running", repo: "acme/app" });
    // Its next transition moves the brief out of the run item.
    expect(await store.saveRun({ ...old!, version: 4 })).toBe(true);
    const rewritten = (await scan(store)).find((found) => found.sk?.S === "RUN");
    expect(itemSize(rewritten ?? {})).toBeLessThan(itemSize(item));
    expect((await store.getRun("old1"))?.snapshot).toEqual(snapshot);
  });
});
