import { randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, open, readFile, rename, rm, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { evictSetupCache, setupCacheDir } from "../../local/setup-cache-dirs.js";
import { archiveName, parsePointer, pointerName, pointerText } from "../../setup-cache-layout.js";
import type { CacheScope, EntryUpload, SetupCacheStore, StoredEntry } from "./cache-store.js";

/** How a {@link DirectoryCacheStore} is set up. */
export interface DirectoryCacheStoreOptions {
  /** Entries live under `<stateDir>/cache/`, as local DevBoxes' do. */
  stateDir: string;
  /** The most the whole cache may hold (`CLUSTERCODE_SETUP_CACHE_MAX_MB`), in bytes. */
  maxBytes: number;
  /** The largest entry it takes (`CLUSTERCODE_SETUP_CACHE_ENTRY_MAX_MB`), in bytes. */
  maxEntryBytes: number;
}

/**
 * The setup cache in a directory of the app's host (its instance volume on ECS): the local
 * DevBoxes' layout (`<stateDir>/cache/<owner>/<repo>/branch-<hash>/`, a pointer naming a tar by
 * its checksum) and their eviction, least recently used first, so that both kinds of DevBox
 * share one cache and one limit on a host that runs both.
 */
export class DirectoryCacheStore implements SetupCacheStore {
  readonly #options: DirectoryCacheStoreOptions;

  constructor(options: DirectoryCacheStoreOptions) {
    this.#options = options;
  }

  /** An entry larger than the whole cache could never be kept either. */
  get maxEntryBytes(): number {
    return Math.min(this.#options.maxEntryBytes, this.#options.maxBytes);
  }

  async get(scope: CacheScope, key: string): Promise<StoredEntry | undefined> {
    const dir = this.#dir(scope);
    const text = await readFile(join(dir, pointerName(key)), "utf8").catch(() => undefined);
    const pointer = text === undefined ? undefined : parsePointer(text);
    if (pointer === undefined) return undefined;
    const path = join(dir, pointer.archive);
    // Opened before it is streamed: an eviction from now on cannot cut the answer short.
    const handle = await open(path, "r").catch(() => undefined);
    if (handle === undefined) return undefined;
    const { size } = await handle.stat();
    // The entry's time is its last use: the least recently used go first.
    const now = new Date();
    await utimes(path, now, now).catch(() => {});
    return { sha256: pointer.sha256, bytes: size, body: handle.createReadStream() };
  }

  /**
   * Writes the archive under a temporary name and renames it into place, then the pointer,
   * after making room for it under the limit first: the cache never holds more than its limit
   * plus the uploads under way, each at most {@link maxEntryBytes}.
   */
  async put(scope: CacheScope, key: string, upload: EntryUpload): Promise<void> {
    const { stateDir, maxBytes } = this.#options;
    const dir = this.#dir(scope);
    await mkdir(dir, { recursive: true });
    await evictSetupCache(stateDir, Math.max(0, maxBytes - upload.bytes));
    const temporary = join(dir, `.${key}.${randomBytes(6).toString("hex")}.tmp`);
    try {
      await pipeline(upload.body, createWriteStream(temporary, { mode: 0o644 }));
      const archive = archiveName(key, upload.sha256);
      await rename(temporary, join(dir, archive));
      await writeFile(`${temporary}.sha256`, pointerText(upload.sha256, archive));
      await rename(`${temporary}.sha256`, join(dir, pointerName(key)));
    } finally {
      await rm(temporary, { force: true });
      await rm(`${temporary}.sha256`, { force: true });
    }
  }

  #dir(scope: CacheScope): string {
    return setupCacheDir(this.#options.stateDir, scope.repository, scope.branch);
  }
}
