import { GetObjectCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { Readable } from "node:stream";
import { classifyAwsError } from "../../../aws/classify-error.js";
import { DevBoxError } from "../../errors.js";
import { repositoryKey } from "../../local/mirror.js";
import { branchScope } from "../../setup-cache-layout.js";
import type { CacheScope, EntryUpload, SetupCacheStore, StoredEntry } from "./cache-store.js";

/** How an {@link S3CacheStore} is set up. */
export interface S3CacheStoreOptions {
  client: S3Client;
  bucket: string;
  /** The largest entry it takes (`CLUSTERCODE_SETUP_CACHE_ENTRY_MAX_MB`), in bytes. */
  maxEntryBytes: number;
}

/** S3 errors (the SDK's `error.name`) and what they mean here. */
const BY_NAME = {
  NoSuchKey: { code: "not_found", retryable: false },
  NotFound: { code: "not_found", retryable: false },
  SlowDown: { code: "unavailable", retryable: true },
  AccessDenied: { code: "access_denied", retryable: false },
  NoSuchBucket: { code: "access_denied", retryable: false },
} as const;

/** The object metadata (`x-amz-meta-sha256`) that holds an entry's checksum. */
const SHA256_METADATA = "sha256";

/**
 * The setup cache in an S3 bucket: entry `key` of a scope is the object
 * `<owner>/<repo>/branch-<hash>/<key>`, its sha256 in its metadata. A put is one PutObject of
 * the streamed body with its length: S3 makes the object only once it has every byte, so an
 * upload that errors leaves the old entry, or none. The bucket's lifecycle rule expires entries
 * (14 days in the stack) in place of the host's eviction.
 */
export class S3CacheStore implements SetupCacheStore {
  readonly #options: S3CacheStoreOptions;

  constructor(options: S3CacheStoreOptions) {
    this.#options = options;
  }

  get maxEntryBytes(): number {
    return this.#options.maxEntryBytes;
  }

  async get(scope: CacheScope, key: string): Promise<StoredEntry | undefined> {
    let answer;
    try {
      answer = await this.#options.client.send(
        new GetObjectCommand({ Bucket: this.#options.bucket, Key: objectKey(scope, key) }),
      );
    } catch (error) {
      const mapped = toCacheError(error, "GetObject");
      if (mapped === undefined) return undefined;
      throw mapped;
    }
    const sha256 = answer.Metadata?.[SHA256_METADATA];
    const body = answer.Body;
    if (!(body instanceof Readable))
      throw new DevBoxError("cache-unavailable", "GetObject: no body");
    // An object without its checksum or length was not written by this store: no entry.
    const bytes = answer.ContentLength;
    if (sha256 === undefined || !/^[0-9a-f]{64}$/.test(sha256) || bytes === undefined) {
      body.destroy();
      return undefined;
    }
    return { sha256, bytes, body };
  }

  async put(scope: CacheScope, key: string, upload: EntryUpload): Promise<void> {
    // A body that errors (too long, wrong checksum, cut off) would leave the upload waiting for
    // bytes that never come: it is aborted, before its last bytes, so S3 makes no object.
    const abort = new AbortController();
    const onError = (error: Error) => abort.abort(error);
    upload.body.once("error", onError);
    try {
      await this.#options.client.send(
        new PutObjectCommand({
          Bucket: this.#options.bucket,
          Key: objectKey(scope, key),
          Body: upload.body,
          ContentLength: upload.bytes,
          ContentType: "application/x-tar",
          Metadata: { [SHA256_METADATA]: upload.sha256 },
        }),
        { abortSignal: abort.signal },
      );
    } catch (error) {
      // The body's own error is the caller's to read.
      if (upload.body.errored !== null) throw upload.body.errored;
      throw toCacheError(error, "PutObject") ?? error;
    } finally {
      upload.body.off("error", onError);
    }
  }
}

/** Where the setup cache's S3 client connects, and as whom (default: the SDK's chain). */
export interface SetupCacheS3Options {
  region?: string | undefined;
  endpoint?: string | undefined;
  credentials?: { accessKeyId: string; secretAccessKey: string };
}

/**
 * An S3 client for the setup cache bucket. With `endpoint` (tests, emulators) objects are
 * addressed by path. Checksums are only computed where S3 requires them: the hub checks each
 * entry's sha256 itself, and a streamed body then goes out as it is, with its length.
 */
export function setupCacheS3Client(options: SetupCacheS3Options): S3Client {
  const { region, endpoint, credentials } = options;
  return new S3Client({
    ...(region === undefined ? {} : { region }),
    ...(endpoint === undefined ? {} : { endpoint, forcePathStyle: true }),
    ...(credentials === undefined ? {} : { credentials }),
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
}

/** `<owner>/<repo>/branch-<hash>/<key>`: the object of entry `key` of `scope`. */
export function objectKey(scope: CacheScope, key: string): string {
  return `${repositoryKey(scope.repository)}/${branchScope(scope.branch)}/${key}`;
}

/** The SDK's error as a DevBoxError; undefined when it says there is no such object. */
function toCacheError(error: unknown, operation: string): DevBoxError | undefined {
  const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  const known = classifyAwsError(error, "S3", operation, BY_NAME);
  if (known.code === "not_found" || status === 404) return undefined;
  return new DevBoxError("cache-unavailable", known.message, {
    retryable: known.retryable,
    cause: error,
  });
}
