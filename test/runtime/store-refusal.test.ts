import { readFileSync } from "node:fs";
import { PutItemCommand } from "@aws-sdk/client-dynamodb";
import { describe, expect, it } from "vitest";
import type { Effect } from "../../src/engine/model.js";
import type { RunDocument } from "../../src/runtime/runtime.js";
import type { Item } from "../../src/store/dynamo-attributes.js";
import { itemSize } from "../../src/store/dynamo-limits.js";
import { InstantWorld } from "../helpers/instant-world.js";
import { definitionOf, workflowOf } from "../engine/harness.js";
import { useTestDynamo } from "../store/dynalite-fixture.js";

const dynamo = useTestDynamo();

// 240 setup commands of 1,000 backslashes each: the file is within the 256 KiB a workflow may
// have and the pinned definition is kept beside the run item (a blob), but JSON doubles each
// backslash, so the DevBox claim that repeats the commands in the outbox (strings under 1 KB
// stay inline) makes the next state about 480 KB, too large for DynamoDB.
const setup = Array.from({ length: 240 }, () => `'${"\\".repeat(1_000)}'`).join(", ");
const oversized = workflowOf(`version: 1
name: oversized
on: { label: go }
devbox: { setup: [${setup}] }
nodes:
  fix: { kind: run, run: make }
`);

describe("a store refusal", () => {
  it("fails the run with the store's reason instead of leaving it running", async () => {
    const store = await dynamo.newStore();
    const world = new InstantWorld({ store });
    const definition = definitionOf(oversized, { runId: "big" });
    const delivery = await world.runtime.start(definition, { repo: "acme/app" });
    expect(delivery.state).toMatchObject({
      status: "failed",
      reason:
        "the store refused to record the run's next state: DynamoDB PutItem failed: ValidationException: Item size has exceeded the maximum allowed size",
    });
    expect(world.performed.filter((effect) => effect.type === "devbox.claim")).toEqual([]);
    // Evidence is written off the transition's path: wait for it before reading it back.
    await world.runtime.idle();
    const kinds = (await store.listEvidence("big")).map((record) => record.entry);
    expect(kinds).toContainEqual(expect.objectContaining({ kind: "run.aborted" }));
    expect((await store.getRun("big"))?.status).toBe("failed");

    // Picking it up again (another process's resume) reports where it stands, and crashes nothing.
    const again = new InstantWorld({ store });
    const reconciled = await again.runtime.reconcile("big");
    expect(reconciled?.document.state.status).toBe("failed");
    const restart = await again.runtime.deliver("big", { type: "run.start", at: Date.now() });
    expect(restart).toMatchObject({ applied: false, refused: { code: "not-applicable" } });
  });

  it("resume continues a run written before blobs whose item DynamoDB would refuse", async () => {
    const store = await dynamo.newStore();
    // The old layout kept the brief twice (snapshot and outbox): with a 70,000-character CJK
    // brief that is over 400 KB of UTF-8, which dynalite took (it counts characters) and AWS
    // would refuse, so the run could never be written again.
    const brief = "壊れた。".repeat(17_500);
    const fixture = new URL("../store/fixtures/run-item-2026-12.json", import.meta.url);
    const item = JSON.parse(readFileSync(fixture, "utf8")) as Item;
    const document = JSON.parse(item.snapshot?.S ?? "") as RunDocument;
    document.definition.brief = brief;
    const outbox = (JSON.parse(item.outbox?.S ?? "") as Effect[]).map((effect) =>
      effect.type === "command.dispatch"
        ? { ...effect, request: { ...effect.request, files: { brief } } }
        : effect,
    );
    const old = {
      ...item,
      snapshot: { S: JSON.stringify(document) },
      outbox: { S: JSON.stringify(outbox) },
    };
    expect(itemSize(old)).toBeGreaterThan(400 * 1024);
    await dynamo.client.send(new PutItemCommand({ TableName: store.table, Item: old }));

    const world = new InstantWorld({ store });
    const loaded = await world.runtime.reconcile("old1");
    const devbox = loaded?.document.state.devbox?.id ?? "";
    const lost = await world.runtime.deliver("old1", {
      type: "devbox.lost",
      devboxId: devbox,
      reason: "its runtime process stopped",
      at: Date.now(),
    });
    expect(lost.applied).toBe(true);
    const { state, definition } = await world.settled("old1");
    expect(state.status).toBe("succeeded");
    expect(definition.brief).toBe(brief);
  });
});
