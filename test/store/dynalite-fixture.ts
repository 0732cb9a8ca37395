import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { afterAll, beforeAll } from "vitest";
import { DynamoStore, type DynamoStoreOptions } from "../../src/store/dynamo-store.js";
import { createTable } from "../../src/store/dynamo-table.js";
import { startEmbeddedDynamo, type EmbeddedDynamo } from "../../src/store/embedded.js";

/** A dynalite server for one test file, with a fresh table per store. */
export interface TestDynamo {
  readonly endpoint: string;
  readonly client: DynamoDBClient;
  /** A new, empty table (unique name) and a store on it. */
  newStore(options?: Omit<DynamoStoreOptions, "client" | "table">): Promise<DynamoStore>;
}

let tables = 0;

/** Starts an in-memory dynalite before the file's tests and stops it after them. */
export function useTestDynamo(): TestDynamo {
  let server: EmbeddedDynamo | undefined;
  let client: DynamoDBClient | undefined;
  beforeAll(async () => {
    server = await startEmbeddedDynamo();
    client = testClient(server.endpoint);
  });
  afterAll(async () => {
    client?.destroy();
    await server?.close();
  });
  const ready = (): { server: EmbeddedDynamo; client: DynamoDBClient } => {
    if (server === undefined || client === undefined) throw new Error("dynalite is not started");
    return { server, client };
  };
  return {
    get endpoint() {
      return ready().server.endpoint;
    },
    get client() {
      return ready().client;
    },
    async newStore(options = {}) {
      const table = `store_test_${process.pid}_${++tables}`;
      await createTable(ready().client, table);
      return new DynamoStore({ ...options, client: ready().client, table });
    },
  };
}

/** A client for a local endpoint with dummy credentials. */
export function testClient(endpoint: string, maxAttempts?: number): DynamoDBClient {
  return new DynamoDBClient({
    endpoint,
    region: "us-east-1",
    credentials: { accessKeyId: "test", secretAccessKey: "test" },
    ...(maxAttempts === undefined ? {} : { maxAttempts }),
  });
}
