import type { Readable } from "node:stream";

/**
 * One branch of one repository's setup cache: `repository` as the executor is given it (the
 * hub's git route, a GitHub URL or a local path; `repositoryKey` names it), `branch` as is.
 */
export interface CacheScope {
  repository: string;
  branch: string;
}

/** An entry as a store hands it out: its bytes, how many, and their sha256 (hex). */
export interface StoredEntry {
  sha256: string;
  bytes: number;
  body: Readable;
}

/**
 * An entry on its way in. `body` errors rather than ends when its bytes are more than `bytes`
 * or do not hash to `sha256` (see `VerifiedBody`), and a store keeps nothing of a body that
 * errored: readers see the old entry or the new one, whole.
 */
export interface EntryUpload {
  body: Readable;
  bytes: number;
  sha256: string;
}

/**
 * Where the hub keeps ECS DevBoxes' setup cache: a directory on the app's host by default
 * (see `DirectoryCacheStore`), or an S3 bucket (see `S3CacheStore`). Stores know nothing of
 * DevBoxes: the hub decides which scope a DevBox reads and writes. Failures to reach the
 * storage are `DevBoxError`s `cache-unavailable`.
 */
export interface SetupCacheStore {
  /** The largest entry the store takes, in bytes. */
  readonly maxEntryBytes: number;
  /** Entry `key` of `scope`, or undefined when it has none (or only a damaged one). */
  get(scope: CacheScope, key: string): Promise<StoredEntry | undefined>;
  /** Keeps `upload` as entry `key` of `scope`, replacing any; rejects when the body errors. */
  put(scope: CacheScope, key: string, upload: EntryUpload): Promise<void>;
}
