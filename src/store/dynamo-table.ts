import {
  CreateTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  type TableDescription,
} from "@aws-sdk/client-dynamodb";
import { toStoreError } from "./dynamo-error.js";
import { StoreError } from "./store-error.js";

/** Names of the table's two global secondary indexes, both projecting every attribute. */
export const GSI = {
  /** `gsi1pk`/`gsi1sk`: runs by repository (`REPO#repo`), timers by due time (`TIMERS`). */
  gsi1: "gsi1",
  /** `gsi2pk`/`gsi2sk`: active runs (`RUNS#ACTIVE`), unprocessed deliveries (sparse). */
  gsi2: "gsi2",
} as const;

const KEY_ATTRIBUTES = ["pk", "sk", "gsi1pk", "gsi1sk", "gsi2pk", "gsi2sk"] as const;

/**
 * Creates the store's table (on-demand billing, keys `pk`/`sk`, indexes gsi1 and gsi2) unless it
 * exists, then waits until it and its indexes are ACTIVE. Safe to call on every start; throws a
 * StoreError `schema_mismatch` when a table of that name exists with other keys or indexes.
 */
export async function createTable(
  client: DynamoDBClient,
  table: string,
  options: { timeoutMs?: number } = {},
): Promise<void> {
  try {
    await client.send(
      new CreateTableCommand({
        TableName: table,
        BillingMode: "PAY_PER_REQUEST",
        AttributeDefinitions: KEY_ATTRIBUTES.map((name) => ({
          AttributeName: name,
          AttributeType: "S",
        })),
        KeySchema: [
          { AttributeName: "pk", KeyType: "HASH" },
          { AttributeName: "sk", KeyType: "RANGE" },
        ],
        GlobalSecondaryIndexes: Object.values(GSI).map((index) => ({
          IndexName: index,
          KeySchema: [
            { AttributeName: `${index}pk`, KeyType: "HASH" },
            { AttributeName: `${index}sk`, KeyType: "RANGE" },
          ],
          Projection: { ProjectionType: "ALL" },
        })),
      }),
    );
  } catch (error) {
    // Already there (created by an earlier start or another process): only wait for it.
    if (!(error instanceof Error && error.name === "ResourceInUseException")) {
      throw toStoreError(error, "CreateTable");
    }
  }
  await waitUntilActive(client, table, options.timeoutMs ?? 300_000);
}

async function waitUntilActive(
  client: DynamoDBClient,
  table: string,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let delay = 20; ; delay = Math.min(delay * 2, 2_000)) {
    let description: TableDescription | undefined;
    try {
      description = (await client.send(new DescribeTableCommand({ TableName: table }))).Table;
    } catch (error) {
      throw toStoreError(error, "DescribeTable");
    }
    if (description !== undefined && isActive(description)) {
      checkSchema(description, table);
      return;
    }
    if (Date.now() + delay > deadline) {
      throw new StoreError("unavailable", `Table ${table} did not become ACTIVE in time`, {
        retryable: true,
      });
    }
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

function isActive(description: TableDescription): boolean {
  return (
    description.TableStatus === "ACTIVE" &&
    (description.GlobalSecondaryIndexes ?? []).every((index) => index.IndexStatus === "ACTIVE")
  );
}

function checkSchema(description: TableDescription, table: string): void {
  const keyNames = (description.KeySchema ?? []).map((key) => key.AttributeName).join(",");
  const indexes = new Set(
    (description.GlobalSecondaryIndexes ?? []).map((index) =>
      [index.IndexName, ...(index.KeySchema ?? []).map((key) => key.AttributeName)].join(","),
    ),
  );
  const missing = Object.values(GSI).filter(
    (index) => !indexes.has(`${index},${index}pk,${index}sk`),
  );
  if (keyNames !== "pk,sk" || missing.length > 0) {
    throw new StoreError(
      "schema_mismatch",
      `Table ${table} exists but lacks the store's keys (pk, sk) or indexes (${Object.values(GSI).join(", ")})`,
    );
  }
}
