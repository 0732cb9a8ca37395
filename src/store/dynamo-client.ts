import { DynamoDBClient, type DynamoDBClientConfig } from "@aws-sdk/client-dynamodb";

/**
 * A DynamoDB client as the store uses it: the SDK resolves each command class's middleware
 * stack once and reuses it (`cacheMiddleware`) instead of rebuilding it on every request. The
 * store never edits a stack between requests, and the rebuilt stacks were the largest garbage
 * of a restart's reads (about 30 MB of heap at 1,000 parked runs, bench/parked-runs.js).
 */
export function dynamoClient(config: DynamoDBClientConfig): DynamoDBClient {
  return new DynamoDBClient({ ...config, cacheMiddleware: true });
}
