import { dynamoClient } from "./dynamo-client.js";
import { DynamoStore } from "./dynamo-store.js";
import { openStore, type OpenedStore } from "./embedded.js";
import { StateDirHolder, type HolderInfo } from "./state-dir-holder.js";
import { StoreError } from "./store-error.js";

/** A store opened to read, and who (if anyone) held the state directory at the time. */
export interface StateDirReader extends OpenedStore {
  /** The live process that holds the directory, when the store is read through it. */
  holder: HolderInfo | undefined;
}

/** How long a reader waits for a holder that has the lock but has not yet written its note. */
const NOTE_WAIT_MS = 2000;

/**
 * Opens a state directory's store for reading while another process may hold it: when the
 * directory is free, it opens it itself (a note left by a dead holder means nothing then); when
 * a live `clustercode` process holds it, it talks to that process's embedded database on
 * 127.0.0.1, named in its holder note. With CLUSTERCODE_DYNAMODB_ENDPOINT set there is no lock
 * to share and the store is opened directly.
 */
export async function openStateDirReader(options: {
  stateDir: string;
  env: NodeJS.ProcessEnv;
}): Promise<StateDirReader> {
  for (let waited = 0; ; waited += 100) {
    try {
      const opened = await openStore(options);
      const holder = options.env.CLUSTERCODE_DYNAMODB_ENDPOINT
        ? StateDirHolder.read(options.stateDir)
        : undefined;
      return { ...opened, holder };
    } catch (error) {
      if (!(error instanceof StoreError && error.code === "state_dir_locked")) throw error;
      const holder = StateDirHolder.read(options.stateDir);
      if (holder !== undefined) return readThrough(holder, options.env);
      if (waited >= NOTE_WAIT_MS) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function readThrough(holder: HolderInfo, env: NodeJS.ProcessEnv): StateDirReader {
  const client = dynamoClient({
    endpoint: holder.endpoint,
    region: env.AWS_REGION || "us-east-1",
    credentials: { accessKeyId: "embedded", secretAccessKey: "embedded" },
  });
  const table = env.CLUSTERCODE_DYNAMODB_TABLE || "clustercode";
  return {
    store: new DynamoStore({ client, table }),
    endpoint: holder.endpoint,
    holder,
    close: () => {
      client.destroy();
      return Promise.resolve();
    },
  };
}
