import { mkdir } from "node:fs/promises";
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type { DynamoDBClient, DynamoDBClientConfig } from "@aws-sdk/client-dynamodb";
import { dynamoClient } from "./dynamo-client.js";
import { DynamoStore } from "./dynamo-store.js";
import { createTable } from "./dynamo-table.js";
import type { TableRequestsOptions } from "./dynamo-requests.js";
import { attachStateDir } from "./state-dir-server.js";
import type { Settings } from "../settings/index.js";

const require = createRequire(import.meta.url);

/** A running embedded DynamoDB-compatible server (dynalite) on 127.0.0.1. */
export interface EmbeddedDynamo {
  /** `http://127.0.0.1:<port>`. */
  endpoint: string;
  /** Stops the server and closes its database (releasing the directory for the next process). */
  close(): Promise<void>;
}

/**
 * Starts dynalite in memory on a free port of 127.0.0.1 (a state directory's persisted store is
 * shared between processes instead: see {@link attachStateDir}).
 */
export async function startEmbeddedDynamo(): Promise<EmbeddedDynamo> {
  const worker = new Worker(DYNALITE_WORKER, {
    eval: true,
    resourceLimits: { maxYoungGenerationSizeMb: DYNALITE_YOUNG_GENERATION_MB },
    workerData: { dynalite: require.resolve("dynalite") },
  });
  const port = await new Promise<number>((resolve, reject) => {
    worker.once("error", reject);
    worker.once("message", (message: { port: number }) => resolve(message.port));
  });
  const close = async () => {
    const closed = new Promise<void>((resolve) => worker.once("message", () => resolve()));
    worker.postMessage("close");
    await closed;
    await worker.terminate();
  };
  return { endpoint: `http://127.0.0.1:${port}`, close };
}

/**
 * The young generation of dynalite's thread, in MB. Left to V8, its semi-spaces grew to 16 MB
 * that a request's short-lived garbage never needs: capped, the thread's heap is about 9 MB
 * smaller with 1,000 parked runs (bench/parked-runs.js), at no measurable cost in engine
 * throughput (bench/engine-throughput.js).
 */
const DYNALITE_YOUNG_GENERATION_MB = 4;

/**
 * dynalite runs on a worker thread so that the database's work and the engine's share the two
 * cores instead of one event loop. The code is inline (CommonJS, as eval'd workers are) so it
 * runs the same from `src/` under the tests and from `dist/`.
 */
const DYNALITE_WORKER = `
const { parentPort, workerData } = require("node:worker_threads");
const dynalite = require(workerData.dynalite);
const server = dynalite({
  createTableMs: 0,
  deleteTableMs: 0,
  updateTableMs: 0,
});
server.listen(0, "127.0.0.1", () => parentPort.postMessage({ port: server.address().port }));
parentPort.on("message", () => {
  server.close(() => parentPort.postMessage("closed"));
  server.closeIdleConnections();
});
`;

/** An open store and how to let go of it. */
export interface OpenedStore {
  store: DynamoStore;
  /** The DynamoDB endpoint it talks to (the embedded server's, when one was started). */
  endpoint: string;
  /** Closes the client, and the embedded server when one was started. */
  close(): Promise<void>;
}

/** Where openStore finds its database. */
export interface OpenStoreOptions {
  /** Local state directory; its database lives in `<stateDir>/dynamodb` (in memory without). */
  stateDir?: string;
  /**
   * The decoded CLUSTERCODE_DYNAMODB_ENDPOINT, CLUSTERCODE_DYNAMODB_TABLE, AWS_REGION and AWS
   * keys (the settings' `store` group).
   */
  settings: StoreSettings;
  /** Passed to the DynamoStore: called once per DynamoDB request (see TableRequestsOptions). */
  onRequest?: TableRequestsOptions["onRequest"];
}

/** The decoded settings a store is opened with. */
export type StoreSettings = Pick<
  Settings["store"],
  | "dynamodbEndpoint"
  | "dynamodbTable"
  | "awsRegion"
  | "awsAccessKeyId"
  | "awsSecretAccessKey"
  | "awsSessionToken"
>;

/**
 * Opens the store. With CLUSTERCODE_DYNAMODB_ENDPOINT set, it uses that endpoint and table
 * CLUSTERCODE_DYNAMODB_TABLE (default `clustercode`) in AWS_REGION (default `us-east-1`), with
 * the AWS keys of the settings or else the SDK's default credentials. Otherwise it attaches to the
 * state directory's shared store (see {@link attachStateDir}), or starts dynalite in memory
 * without a stateDir. Creates the table when missing either way.
 */
export async function openStore(options: OpenStoreOptions): Promise<OpenedStore> {
  const { settings } = options;
  const endpoint = nonEmpty(settings.dynamodbEndpoint);
  const table = nonEmpty(settings.dynamodbTable) ?? "clustercode";
  const region = nonEmpty(settings.awsRegion) ?? "us-east-1";
  if (endpoint !== undefined) {
    const client = dynamoClient({ endpoint, region, ...credentialsFrom(settings) });
    return finishOpening(client, table, endpoint, options, async () => {});
  }
  const server = await embeddedServer(options.stateDir);
  const client = dynamoClient({
    endpoint: server.endpoint,
    region,
    credentials: { accessKeyId: "embedded", secretAccessKey: "embedded" },
  });
  return finishOpening(client, table, server.endpoint, options, () => server.close());
}

async function finishOpening(
  client: DynamoDBClient,
  table: string,
  endpoint: string,
  options: OpenStoreOptions,
  closeServer: () => Promise<void>,
): Promise<OpenedStore> {
  const close = async (): Promise<void> => {
    client.destroy();
    await closeServer();
  };
  try {
    await createTable(client, table);
  } catch (error) {
    await close();
    throw error;
  }
  const store = new DynamoStore({
    client,
    table,
    ...(options.onRequest === undefined ? {} : { onRequest: options.onRequest }),
  });
  return { store, endpoint, close };
}

/** The state directory's shared store, or dynalite in memory. */
async function embeddedServer(stateDir: string | undefined): Promise<EmbeddedDynamo> {
  if (stateDir === undefined) return startEmbeddedDynamo();
  await mkdir(stateDir, { recursive: true });
  const attached = await attachStateDir(stateDir);
  return {
    endpoint: attached.endpoint,
    close: () => Promise.resolve(attached.detach()),
  };
}

function credentialsFrom(settings: StoreSettings): Pick<DynamoDBClientConfig, "credentials"> {
  const accessKeyId = nonEmpty(settings.awsAccessKeyId);
  const secretAccessKey = nonEmpty(settings.awsSecretAccessKey);
  if (accessKeyId === undefined || secretAccessKey === undefined) return {};
  const sessionToken = nonEmpty(settings.awsSessionToken);
  return {
    credentials: { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) },
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}
