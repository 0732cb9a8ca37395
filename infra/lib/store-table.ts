import { RemovalPolicy } from "aws-cdk-lib";
import { AttributeType, BillingMode, ProjectionType, Table } from "aws-cdk-lib/aws-dynamodb";
import type { Construct } from "constructs";

/**
 * The store's one table, as `src/store/dynamo-table.ts` creates it: keys `pk`/`sk`, indexes
 * gsi1 (`gsi1pk`/`gsi1sk`) and gsi2 (`gsi2pk`/`gsi2sk`) projecting everything; on-demand,
 * point-in-time recovery, TTL on `ttl`. Kept when the stack is deleted.
 */
export function createStoreTable(scope: Construct): Table {
  const table = new Table(scope, "Store", {
    partitionKey: { name: "pk", type: AttributeType.STRING },
    sortKey: { name: "sk", type: AttributeType.STRING },
    billingMode: BillingMode.PAY_PER_REQUEST,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    timeToLiveAttribute: "ttl",
    removalPolicy: RemovalPolicy.RETAIN,
  });
  for (const index of ["gsi1", "gsi2"]) {
    table.addGlobalSecondaryIndex({
      indexName: index,
      partitionKey: { name: `${index}pk`, type: AttributeType.STRING },
      sortKey: { name: `${index}sk`, type: AttributeType.STRING },
      projectionType: ProjectionType.ALL,
    });
  }
  return table;
}
