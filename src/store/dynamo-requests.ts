import {
  BatchGetItemCommand,
  BatchWriteItemCommand,
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  UpdateItemCommand,
  type DynamoDBClient,
  type QueryCommandInput,
  type UpdateItemCommandInput,
  type WriteRequest,
} from "@aws-sdk/client-dynamodb";
import { isConditionFailed, toStoreError } from "./dynamo-error.js";
import type { Item } from "./dynamo-items.js";
import { checkBatchWrite, checkItem, checkKey, DYNAMODB_LIMITS } from "./dynamo-limits.js";
import { StoreError } from "./store-error.js";

/** How requests reach the table. */
export interface TableRequestsOptions {
  client: DynamoDBClient;
  table: string;
  /**
   * Called once per DynamoDB request with its operation name (`PutItem`, `BatchWriteItem`, ...)
   * and the number of items it names (a batch's, one for a single-item request, none for a
   * query): DynamoDB bills each item of a batch as a request of its own.
   */
  onRequest?: (commandName: string, items: number) => void;
  /** Retries of a batch's unprocessed items before giving up (default 8). */
  batchRetries?: number;
  /** First backoff before such a retry, doubled each time and capped at 1 s (default 25 ms). */
  batchRetryDelayMs?: number;
}

/** A condition expression with its placeholders. */
export interface Condition {
  expression: string;
  names?: Record<string, string>;
  values?: Item;
}

const BATCH_WRITE_MAX = DYNAMODB_LIMITS.batchWriteItems;
const BATCH_GET_MAX = DYNAMODB_LIMITS.batchGetKeys;

/**
 * The DynamoDB requests the store makes on its one table: each is counted through `onRequest`,
 * checked against DynamoDB's own limits (so that dynalite refuses what AWS would, with the same
 * ValidationException), and any failure is mapped to a StoreError here, once.
 */
export class TableRequests {
  /** Name of the table. */
  readonly table: string;
  readonly #client: DynamoDBClient;
  readonly #onRequest: TableRequestsOptions["onRequest"];
  readonly #batchRetries: number;
  readonly #batchRetryDelayMs: number;

  constructor(options: TableRequestsOptions) {
    this.table = options.table;
    this.#client = options.client;
    this.#onRequest = options.onRequest;
    this.#batchRetries = options.batchRetries ?? 8;
    this.#batchRetryDelayMs = options.batchRetryDelayMs ?? 25;
  }

  /** GetItem with a strongly consistent read. */
  /** GetItem, strongly consistent; with `attributes`, only those (a projection). */
  async get(key: Item, attributes?: string[]): Promise<Item | undefined> {
    const projection =
      attributes === undefined
        ? {}
        : {
            ProjectionExpression: attributes.map((_, i) => `#p${i}`).join(", "),
            ExpressionAttributeNames: Object.fromEntries(attributes.map((a, i) => [`#p${i}`, a])),
          };
    const command = new GetItemCommand({
      TableName: this.table,
      Key: key,
      ConsistentRead: true,
      ...projection,
    });
    return (
      await this.#send(
        "GetItem",
        () => this.#client.send(command),
        () => checkKey(key),
      )
    ).Item;
  }

  /** PutItem; with a condition, false when the condition does not hold. */
  async put(item: Item, condition?: Condition): Promise<boolean> {
    const command = new PutItemCommand({ TableName: this.table, Item: item, ...expr(condition) });
    return this.#conditional(
      "PutItem",
      () => this.#client.send(command),
      () => checkItem(item),
    );
  }

  /** DeleteItem; with a condition, false when the condition does not hold. */
  async delete(key: Item, condition?: Condition): Promise<boolean> {
    const command = new DeleteItemCommand({ TableName: this.table, Key: key, ...expr(condition) });
    return this.#conditional(
      "DeleteItem",
      () => this.#client.send(command),
      () => checkKey(key),
    );
  }

  /** UpdateItem, returning the attributes it asked for; a failed condition throws. */
  async update(input: Omit<UpdateItemCommandInput, "TableName">): Promise<Item | undefined> {
    const command = new UpdateItemCommand({ ...input, TableName: this.table });
    const check = () => checkKey(input.Key ?? {});
    return (await this.#send("UpdateItem", () => this.#client.send(command), check)).Attributes;
  }

  /** Runs a query page by page until `limit` items or the end. */
  async query(
    input: Omit<QueryCommandInput, "TableName" | "Limit" | "ExclusiveStartKey">,
    limit = Infinity,
  ): Promise<Item[]> {
    if (limit !== Infinity && (!Number.isSafeInteger(limit) || limit < 0)) {
      throw new StoreError("invalid_argument", `A limit is a non-negative integer: ${limit}`);
    }
    const found: Item[] = [];
    let start: Item | undefined;
    while (found.length < limit) {
      const command = new QueryCommand({
        ...input,
        TableName: this.table,
        ExclusiveStartKey: start,
        Limit: limit === Infinity ? undefined : limit - found.length,
      });
      const page = await this.#send("Query", () => this.#client.send(command), undefined, 0);
      found.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
      if (start === undefined) break;
    }
    return found.slice(0, limit);
  }

  /**
   * Puts items with one BatchWriteItem per 25, retrying unprocessed ones with a bounded, doubling
   * backoff. A request may not name a key twice, so a repeated key keeps its last item.
   */
  async batchPut(items: Item[]): Promise<void> {
    const byKey = new Map<string, Item>();
    for (const item of items) byKey.set(keyString(item), item);
    const requests: WriteRequest[] = [...byKey.values()].map((item) => ({
      PutRequest: { Item: item },
    }));
    for (let i = 0; i < requests.length; i += BATCH_WRITE_MAX) {
      let pending = requests.slice(i, i + BATCH_WRITE_MAX);
      for (let retry = 0; pending.length > 0; retry++) {
        if (retry > 0) await this.#backOff(retry - 1, pending.length, "writes");
        const command = new BatchWriteItemCommand({ RequestItems: { [this.table]: pending } });
        const items = pending.flatMap((request) =>
          request.PutRequest?.Item === undefined ? [] : [request.PutRequest.Item],
        );
        const check = () => checkBatchWrite(items);
        const send = () => this.#client.send(command);
        const output = await this.#send("BatchWriteItem", send, check, items.length);
        pending = output.UnprocessedItems?.[this.table] ?? [];
      }
    }
  }

  /** Gets items by key with consistent BatchGetItem reads of up to 100, retrying unprocessed keys. */
  async batchGet(keys: Item[]): Promise<Item[]> {
    const found: Item[] = [];
    for (let i = 0; i < keys.length; i += BATCH_GET_MAX) {
      let pending = keys.slice(i, i + BATCH_GET_MAX);
      for (let retry = 0; pending.length > 0; retry++) {
        if (retry > 0) await this.#backOff(retry - 1, pending.length, "reads");
        const command = new BatchGetItemCommand({
          RequestItems: { [this.table]: { Keys: pending, ConsistentRead: true } },
        });
        const check = () => pending.forEach(checkKey);
        const send = () => this.#client.send(command);
        const output = await this.#send("BatchGetItem", send, check, pending.length);
        found.push(...(output.Responses?.[this.table] ?? []));
        pending = output.UnprocessedKeys?.[this.table]?.Keys ?? [];
      }
    }
    return found;
  }

  async #backOff(retry: number, pending: number, what: string): Promise<void> {
    if (retry >= this.#batchRetries) {
      throw new StoreError("unprocessed", `${pending} ${what} stayed unprocessed`, {
        retryable: true,
      });
    }
    const ms = Math.min(this.#batchRetryDelayMs * 2 ** retry, 1_000);
    await new Promise((resolve) => setTimeout(resolve, ms));
  }

  async #conditional(
    operation: string,
    call: () => Promise<unknown>,
    check: () => void,
  ): Promise<boolean> {
    try {
      await this.#send(operation, call, check);
      return true;
    } catch (error) {
      if (isConditionFailed(error)) return false;
      throw error;
    }
  }

  /** Sends one request naming `items` items; `check` refuses it first where DynamoDB would. */
  async #send<T>(
    operation: string,
    call: () => Promise<T>,
    check?: () => void,
    items = 1,
  ): Promise<T> {
    this.#onRequest?.(operation, items);
    try {
      check?.();
      return await call();
    } catch (error) {
      throw toStoreError(error, operation);
    }
  }
}

function expr(condition: Condition | undefined): {
  ConditionExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Item;
} {
  if (condition === undefined) return {};
  return {
    ConditionExpression: condition.expression,
    ...(condition.names === undefined ? {} : { ExpressionAttributeNames: condition.names }),
    ...(condition.values === undefined ? {} : { ExpressionAttributeValues: condition.values }),
  };
}

function keyString(item: Item): string {
  return `${item.pk?.S ?? ""}\u0000${item.sk?.S ?? ""}`;
}
