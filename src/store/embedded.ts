import { mkdir } from "node:fs/promises";
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import { join } from "node:path";
import type { DynamoDBClient, DynamoDBClientConfig } from "@aws-sdk/client-dynamodb";
import { ClassicLevel } from "classic-level";
import { dynamoClient } from "./dynamo-client.js";
import { DynamoStore } from "./dynamo-store.js";
import { createTable } from "./dynamo-table.js";
import { StoreError } from "./store-error.js";
import type { TableRequestsOptions } from "./dynamo-requests.js";

const require = createRequire(import.meta.url);

/** A running embedded DynamoDB-compatible server (dynalite) on 127.0.0.1. */
export interface EmbeddedDynamo {
  /** `http://127.0.0.1:<port>`. */
  endpoint: string;
  /** Stops the server and closes its database (releasing the directory for the next process). */
  close(): Promise<void>;
}

/**
 * Starts dynalite on a free port of 127.0.0.1, persisted in LevelDB under `dir` when given and
 * in memory otherwise. One process at a time may hold a directory: a second live process gets a
 * StoreError `state_dir_locked`. A process that died (even by SIGKILL) holds nothing, since
 * LevelDB's LOCK is a kernel file lock released with the process.
 */
export async function startEmbeddedDynamo(options: { dir?: string } = {}): Promise<EmbeddedDynamo> {
  if (options.dir !== undefined) {
    await mkdir(options.dir, { recursive: true });
    await checkDirectoryIsFree(options.dir);
  }
  const worker = new Worker(DYNALITE_WORKER, {
    eval: true,
    resourceLimits: { maxYoungGenerationSizeMb: DYNALITE_YOUNG_GENERATION_MB },
    workerData: { dynalite: require.resolve("dynalite"), dir: options.dir },
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
  ...(workerData.dir === undefined ? {} : { path: workerData.dir }),
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
  /** Local state directory; the embedded database lives in `<stateDir>/dynamodb`. */
  stateDir?: string;
  /** Read for CLUSTERCODE_DYNAMODB_ENDPOINT, CLUSTERCODE_DYNAMODB_TABLE, AWS_REGION, AWS keys. */
  env: NodeJS.ProcessEnv;
  /** Passed to the DynamoStore: called once per DynamoDB request (see TableRequestsOptions). */
  onRequest?: TableRequestsOptions["onRequest"];
}

/**
 * Opens the store. With CLUSTERCODE_DYNAMODB_ENDPOINT set, it uses that endpoint and table
 * CLUSTERCODE_DYNAMODB_TABLE (default `clustercode`) in AWS_REGION (default `us-east-1`), with
 * the AWS keys of `env` or else the SDK's default credentials. Otherwise it starts dynalite
 * persisted under `<stateDir>/dynamodb` (in memory without a stateDir). Creates the table when
 * missing either way.
 */
export async function openStore(options: OpenStoreOptions): Promise<OpenedStore> {
  const { env } = options;
  const endpoint = nonEmpty(env.CLUSTERCODE_DYNAMODB_ENDPOINT);
  const table = nonEmpty(env.CLUSTERCODE_DYNAMODB_TABLE) ?? "clustercode";
  const region = nonEmpty(env.AWS_REGION) ?? "us-east-1";
  if (endpoint !== undefined) {
    const client = dynamoClient({ endpoint, region, ...credentialsFrom(env) });
    return finishOpening(client, table, endpoint, options, async () => {});
  }
  const dir = options.stateDir === undefined ? undefined : join(options.stateDir, "dynamodb");
  const server = await startEmbeddedDynamo(dir === undefined ? {} : { dir });
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

/**
 * Opens and closes the LevelDB directory once: dynalite itself would crash the process on a
 * locked directory at its first request instead of reporting it.
 */
async function checkDirectoryIsFree(dir: string): Promise<void> {
  const db = new ClassicLevel(dir);
  try {
    await db.open();
  } catch (error) {
    const cause = error instanceof Error ? error.cause : undefined;
    const locked = (cause as { code?: unknown } | undefined)?.code === "LEVEL_LOCKED";
    throw new StoreError(
      locked ? "state_dir_locked" : "unknown",
      locked
        ? `The state directory ${dir} is in use by another running clustercode process`
        : `Cannot open the embedded database in ${dir}`,
      { cause: error },
    );
  } finally {
    await db.close();
  }
}

function credentialsFrom(env: NodeJS.ProcessEnv): Pick<DynamoDBClientConfig, "credentials"> {
  const accessKeyId = nonEmpty(env.AWS_ACCESS_KEY_ID);
  const secretAccessKey = nonEmpty(env.AWS_SECRET_ACCESS_KEY);
  if (accessKeyId === undefined || secretAccessKey === undefined) return {};
  const sessionToken = nonEmpty(env.AWS_SESSION_TOKEN);
  return {
    credentials: { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) },
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}
