import { CreateTableCommand } from "@aws-sdk/client-dynamodb";
import { describe, expect, it } from "vitest";
import { DynamoStore } from "../../src/store/dynamo-store.js";
import { createTable } from "../../src/store/dynamo-table.js";
import { startEmbeddedDynamo } from "../../src/store/embedded.js";
import type { StoredRun } from "../../src/store/store.js";
import { StoreError } from "../../src/store/store-error.js";
import { testClient, useTestDynamo } from "./dynalite-fixture.js";

const dynamo = useTestDynamo();

const run: StoredRun = {
  runId: "r1",
  version: 1,
  repo: "octo/app",
  workflow: "fix.yml",
  status: "running",
  snapshot: {},
  outbox: [],
  createdAt: 1,
  updatedAt: 1,
};

describe("store errors", () => {
  it("reports an unreachable database as retryable and unavailable", async () => {
    const server = await startEmbeddedDynamo();
    await server.close();
    const client = testClient(server.endpoint, 1);
    try {
      const error: unknown = await new DynamoStore({ client, table: "gone" })
        .getRun("r1")
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreError);
      expect(error).toMatchObject({
        code: "unavailable",
        retryable: true,
        message: "DynamoDB GetItem could not reach the endpoint",
      });
    } finally {
      client.destroy();
    }
  });

  it("reports a missing table as not found, not retryable", async () => {
    const store = new DynamoStore({ client: dynamo.client, table: "no_such_table" });
    await expect(store.getRun("r1")).rejects.toMatchObject({
      name: "StoreError",
      code: "not_found",
      retryable: false,
    });
  });

  it("refuses to use an existing table with other keys", async () => {
    await dynamo.client.send(
      new CreateTableCommand({
        TableName: "someone_elses",
        BillingMode: "PAY_PER_REQUEST",
        AttributeDefinitions: [{ AttributeName: "id", AttributeType: "S" }],
        KeySchema: [{ AttributeName: "id", KeyType: "HASH" }],
      }),
    );
    await expect(createTable(dynamo.client, "someone_elses")).rejects.toMatchObject({
      code: "schema_mismatch",
      message:
        "Table someone_elses exists but lacks the store's keys (pk, sk) or indexes (gsi1, gsi2)",
    });
  });

  it("rejects a run over DynamoDB's item size and keeps the previous version", async () => {
    const store = await dynamo.newStore();
    await store.createRun(run);
    // Small strings stay in the run item (large ones move to blobs): 100,000 of them is too much.
    const huge = { ...run, version: 2, snapshot: { log: Array(100_000).fill("xy") } };
    await expect(store.saveRun(huge)).rejects.toMatchObject({
      code: "invalid_request",
      retryable: false,
    });
    expect(await store.getRun("r1")).toEqual(run);
  });

  it("rejects a snapshot that is not JSON, before any request", async () => {
    const requests: string[] = [];
    const store = await dynamo.newStore({ onRequest: (name) => requests.push(name) });
    await expect(store.createRun({ ...run, snapshot: { big: 1n } })).rejects.toMatchObject({
      code: "invalid_argument",
      message: "The snapshot is not JSON-serialisable",
    });
    expect(requests).toEqual([]);
  });
});
