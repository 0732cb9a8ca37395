import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { afterAll, beforeAll } from "vitest";
import { DynamoStore } from "../../src/store/dynamo-store.js";
import { createTable } from "../../src/store/dynamo-table.js";
import { startEmbeddedDynamo, type EmbeddedDynamo } from "../../src/store/embedded.js";

const REPLICA = new URL("./fixtures/replica.js", import.meta.url).pathname;

/**
 * An app replica process (`fixtures/replica.js`, over the built `dist/`), driven by JSON lines.
 */
export class Replica {
  readonly process: ChildProcess;
  readonly #pending = new Map<number, (answer: Record<string, unknown>) => void>();
  #next = 0;

  constructor(endpoint: string, table: string, name: string) {
    this.process = spawn(process.execPath, [REPLICA, endpoint, table, name], {
      stdio: ["pipe", "pipe", "inherit"],
      env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true" },
    });
    createInterface({ input: this.process.stdout! }).on("line", (line) => {
      const answer = JSON.parse(line) as { id: number };
      this.#pending.get(answer.id)?.(answer);
    });
  }

  ask(command: Record<string, unknown>): Promise<Record<string, unknown>> {
    const id = this.#next++;
    return new Promise((resolve) => {
      this.#pending.set(id, resolve);
      this.process.stdin!.write(`${JSON.stringify({ ...command, id })}\n`);
    });
  }

  /** SIGKILLs the process, as a host going away would, and waits until it is gone. */
  async kill(): Promise<void> {
    if (this.process.exitCode !== null || this.process.signalCode !== null) return;
    const closed = new Promise((resolve) => this.process.once("close", resolve));
    this.process.kill("SIGKILL");
    await closed;
  }

  async stop(): Promise<void> {
    this.process.stdin!.end();
    if (this.process.exitCode === null && this.process.signalCode === null) {
      await new Promise((resolve) => this.process.once("close", resolve));
    }
  }
}

/**
 * One embedded DynamoDB endpoint for a test file's replicas (started before its tests, closed
 * after), and a fresh table on it for each scenario, named `<prefix><n>`.
 */
export function useReplicaTables(prefix: string) {
  let dynamo: EmbeddedDynamo;
  let client: DynamoDBClient;
  let tables = 0;
  beforeAll(async () => {
    dynamo = await startEmbeddedDynamo();
    client = new DynamoDBClient({
      endpoint: dynamo.endpoint,
      region: "us-east-1",
      credentials: { accessKeyId: "test", secretAccessKey: "test" },
    });
  });
  afterAll(async () => {
    client.destroy();
    await dynamo.close();
  });
  return {
    get endpoint(): string {
      return dynamo.endpoint;
    },
    async newTable(): Promise<{ table: string; store: DynamoStore }> {
      const table = `${prefix}${tables++}`;
      await createTable(client, table);
      return { table, store: new DynamoStore({ client, table }) };
    },
  };
}
