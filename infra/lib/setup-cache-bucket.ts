import { Duration, RemovalPolicy } from "aws-cdk-lib";
import type { IGrantable } from "aws-cdk-lib/aws-iam";
import { BlockPublicAccess, Bucket, BucketEncryption } from "aws-cdk-lib/aws-s3";
import type { Construct } from "constructs";

/** How long an ECS setup cache entry is kept after it was written. */
export const SETUP_CACHE_DAYS = 14;

/**
 * The bucket ECS DevBoxes' setup cache (`devbox.cache`) is kept in, under
 * `<owner>/<repo>/branch-<hash>/<key>`. DevBox tasks get no AWS permissions and reach only the
 * hub: the app reads and writes the bucket for them, and the hub decides which repository's
 * and branch's prefix a DevBox may read (its run branch and base branch) and write (its run
 * branch, during setup only; see `src/devbox/hub/cache/`). Entries expire after
 * {@link SETUP_CACHE_DAYS} days: a cache, not a store. Private, encrypted, TLS only.
 * docs/warm-start.md has the design.
 */
export function createSetupCacheBucket(scope: Construct, app: IGrantable): Bucket {
  const bucket = new Bucket(scope, "SetupCache", {
    blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
    encryption: BucketEncryption.S3_MANAGED,
    enforceSSL: true,
    lifecycleRules: [
      {
        expiration: Duration.days(SETUP_CACHE_DAYS),
        abortIncompleteMultipartUploadAfter: Duration.days(1),
      },
    ],
    // Only a cache: losing it costs one uncached setup a repository.
    removalPolicy: RemovalPolicy.RETAIN,
  });
  bucket.grantReadWrite(app);
  return bucket;
}
