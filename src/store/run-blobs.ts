import { LruMap } from "../memory/lru-map.js";
import {
  blobItems,
  blobKey,
  blobOf,
  blobText,
  externalise,
  referencesIn,
  resolve,
  type Blob,
} from "./dynamo-blobs.js";
import type { Item } from "./dynamo-attributes.js";
import type { TableRequests } from "./dynamo-requests.js";
import type { StoredRun } from "./store.js";

/** What one process keeps of blobs: bounded, so that parked runs cost bounded memory. */
const TEXT_CACHE_BYTES = 16 * 1024 * 1024;
const MADE_CACHE_BYTES = 8 * 1024 * 1024;
const STORED_KEYS = 50_000;

/** A run ready to write: its item's snapshot and outbox with references, and the blobs to write first. */
export interface EncodedRun {
  run: StoredRun;
  /** Chunk items of blobs not known to be stored yet. */
  items: Item[];
  /** Call once the items are durable. */
  written(): void;
}

/**
 * The large strings of runs, kept in blob items beside each run. Blobs never change (they are
 * addressed by content), so a bounded cache of their text saves reads, and a bounded set of
 * those known to be stored saves rewriting one on every transition that still holds it.
 */
export class RunBlobs {
  readonly #texts = new LruMap<string, string>(TEXT_CACHE_BYTES, (text) => 2 * text.length);
  readonly #made = new LruMap<string, Blob>(
    MADE_CACHE_BYTES,
    (blob) => 2 * blob.text.length + blob.data.byteLength,
  );
  readonly #stored = new LruMap<string, true>(STORED_KEYS);

  constructor(private readonly requests: TableRequests) {}

  /** Takes the large strings out of a run's snapshot and outbox. */
  encode(run: StoredRun): EncodedRun {
    const blobs = new Map<string, Blob>();
    const take = (text: string): Blob => {
      const blob = this.#made.get(text) ?? blobOf(text);
      this.#made.set(text, blob);
      blobs.set(blob.hash, blob);
      return blob;
    };
    const snapshot = externalise(run.snapshot, take);
    const outbox = externalise(run.outbox, take) as unknown[];
    const fresh = [...blobs.values()].filter((blob) => !this.#stored.has(key(run.runId, blob)));
    return {
      run: { ...run, snapshot, outbox },
      items: fresh.flatMap((blob) => blobItems(run.runId, blob)),
      written: () => {
        for (const blob of fresh) {
          this.#stored.set(key(run.runId, blob), true);
          this.#texts.set(key(run.runId, blob), blob.text);
        }
      },
    };
  }

  /** Puts the large strings back into runs read from the table, reading the blobs not cached. */
  async decode(runs: StoredRun[]): Promise<StoredRun[]> {
    const found = new Map<string, string>();
    const wanted: Wanted[] = [];
    for (const run of runs) {
      for (const [hash, chunks] of referencesIn([run.snapshot, run.outbox])) {
        const id = `${run.runId}/${hash}`;
        const text = this.#texts.get(id);
        if (text !== undefined) found.set(id, text);
        else if (!found.has(id)) wanted.push({ runId: run.runId, hash, chunks });
      }
    }
    if (wanted.length > 0) await this.#read(wanted, found);
    return runs.map((run) => {
      const refs = referencesIn([run.snapshot, run.outbox]);
      if (refs.size === 0) return run;
      const texts = new Map<string, string>();
      for (const hash of refs.keys()) {
        const text = found.get(`${run.runId}/${hash}`);
        if (text !== undefined) texts.set(hash, text);
      }
      return {
        ...run,
        snapshot: resolve(run.snapshot, texts),
        outbox: resolve(run.outbox, texts) as unknown[],
      };
    });
  }

  async #read(wanted: Wanted[], found: Map<string, string>): Promise<void> {
    const keys = wanted.flatMap(({ runId, hash, chunks }) =>
      Array.from({ length: chunks }, (_, index) => blobKey(runId, hash, index)),
    );
    const byBlob = new Map<string, Item[]>();
    for (const item of await this.requests.batchGet(keys)) {
      // `RUN#<runId>` / `BLOB#<hash>#<index>`: the blob's id is `<runId>/<hash>`.
      const id = `${item.pk?.S?.slice("RUN#".length)}/${item.sk?.S?.split("#")[1]}`;
      byBlob.set(id, [...(byBlob.get(id) ?? []), item]);
    }
    for (const { runId, hash } of wanted) {
      const id = `${runId}/${hash}`;
      const chunks = byBlob.get(id);
      if (chunks === undefined) continue;
      const text = blobText(hash, chunks);
      found.set(id, text);
      this.#texts.set(id, text);
      this.#stored.set(id, true);
    }
  }
}

/** A blob to read: whose, which, in how many chunks. */
interface Wanted {
  runId: string;
  hash: string;
  chunks: number;
}

function key(runId: string, blob: Blob): string {
  return `${runId}/${blob.hash}`;
}
