import { RemovalPolicy } from "aws-cdk-lib";
import {
  AttributeType,
  BillingMode,
  ProjectionType,
  Table,
  type GlobalSecondaryIndexProps,
} from "aws-cdk-lib/aws-dynamodb";
import type { Construct } from "constructs";
import type { TableBilling } from "./settings.js";

/**
 * The attribute DynamoDB's TTL deletes items by (epoch seconds). The store writes it on the
 * items it needs for a bounded time only (`EXPIRY_ATTRIBUTE` in src/store/dynamo-items.ts, which
 * a test keeps equal): deliveries, their claims, leases.
 */
export const TTL_ATTRIBUTE = "ttl";

/** The store's two global secondary indexes, as src/store/dynamo-table.ts creates them. */
const INDEXES = ["gsi1", "gsi2"] as const;

/**
 * The store's one table, as `src/store/dynamo-table.ts` creates it: keys `pk`/`sk`, indexes
 * gsi1 (`gsi1pk`/`gsi1sk`) and gsi2 (`gsi2pk`/`gsi2sk`) projecting everything; TTL on
 * {@link TTL_ATTRIBUTE}. Billed on demand, or provisioned with auto scaling of the table and
 * each index; point-in-time recovery unless turned off. Kept when the stack is deleted.
 */
export function createStoreTable(
  scope: Construct,
  props: { billing: TableBilling; pointInTimeRecovery: boolean },
): Table {
  const { billing } = props;
  const table = new Table(scope, "Store", {
    partitionKey: { name: "pk", type: AttributeType.STRING },
    sortKey: { name: "sk", type: AttributeType.STRING },
    ...(billing.mode === "on-demand"
      ? { billingMode: BillingMode.PAY_PER_REQUEST }
      : {
          billingMode: BillingMode.PROVISIONED,
          readCapacity: billing.read.min,
          writeCapacity: billing.write.min,
        }),
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: props.pointInTimeRecovery },
    timeToLiveAttribute: TTL_ATTRIBUTE,
    removalPolicy: RemovalPolicy.RETAIN,
  });
  for (const index of INDEXES) {
    const indexProps: GlobalSecondaryIndexProps = {
      indexName: index,
      partitionKey: { name: `${index}pk`, type: AttributeType.STRING },
      sortKey: { name: `${index}sk`, type: AttributeType.STRING },
      projectionType: ProjectionType.ALL,
    };
    table.addGlobalSecondaryIndex(
      billing.mode === "on-demand"
        ? indexProps
        : { ...indexProps, readCapacity: billing.read.min, writeCapacity: billing.write.min },
    );
  }
  if (billing.mode === "provisioned") scaleProvisioned(table, billing);
  return table;
}

/** Target tracking on consumed capacity, for the table and for each index alike. */
function scaleProvisioned(
  table: Table,
  billing: Extract<TableBilling, { mode: "provisioned" }>,
): void {
  const target = { targetUtilizationPercent: billing.targetPercent };
  const range = (units: { min: number; max: number }) => ({
    minCapacity: units.min,
    maxCapacity: units.max,
  });
  table.autoScaleReadCapacity(range(billing.read)).scaleOnUtilization(target);
  table.autoScaleWriteCapacity(range(billing.write)).scaleOnUtilization(target);
  for (const index of INDEXES) {
    table
      .autoScaleGlobalSecondaryIndexReadCapacity(index, range(billing.read))
      .scaleOnUtilization(target);
    table
      .autoScaleGlobalSecondaryIndexWriteCapacity(index, range(billing.write))
      .scaleOnUtilization(target);
  }
}
