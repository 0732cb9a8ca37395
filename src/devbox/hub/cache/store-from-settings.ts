import type { Settings } from "../../../settings/index.js";
import type { SetupCacheStore } from "./cache-store.js";
import { DirectoryCacheStore } from "./directory-store.js";
import { S3CacheStore, setupCacheS3Client } from "./s3-store.js";

const MIB = 1024 * 1024;

/**
 * The store the settings choose for the hub's setup cache: the bucket
 * (`CLUSTERCODE_SETUP_CACHE_BUCKET`, as the CDK stack sets it), else `<stateDir>/cache/` on
 * this host, shared with local DevBoxes and under the same limit.
 */
export function setupCacheStore(stateDir: string, settings: Settings): SetupCacheStore {
  const { devboxes, store } = settings;
  const maxEntryBytes = devboxes.setupCacheEntryMaxMb * MIB;
  if (devboxes.setupCacheBucket !== undefined) {
    const client = setupCacheS3Client({
      region: store.awsRegion,
      endpoint: devboxes.setupCacheS3Endpoint,
    });
    return new S3CacheStore({ client, bucket: devboxes.setupCacheBucket, maxEntryBytes });
  }
  return new DirectoryCacheStore({
    stateDir,
    maxBytes: devboxes.setupCacheMaxMb * MIB,
    maxEntryBytes,
  });
}
