import { Duration } from "aws-cdk-lib";
import { SnsAction } from "aws-cdk-lib/aws-cloudwatch-actions";
import { Alarm, ComparisonOperator, TreatMissingData } from "aws-cdk-lib/aws-cloudwatch";
import type { Table } from "aws-cdk-lib/aws-dynamodb";
import { Topic } from "aws-cdk-lib/aws-sns";
import { Construct } from "constructs";

/**
 * Alarms on the store's table being throttled: reads, writes, and writes to gsi2 (every active
 * run's index entry shares one partition there, the first limit docs/aws.md reaches). Any
 * throttled request in five minutes alarms; throttling slows transitions before it fails them.
 * With `topicArn`, each alarm notifies that SNS topic. Three standard alarms cost $0.30 a month.
 */
export class StoreAlarms extends Construct {
  readonly alarms: Alarm[];

  constructor(
    scope: Construct,
    id: string,
    props: { table: Table; topicArn?: string | undefined },
  ) {
    super(scope, id);
    const { table } = props;
    const period = Duration.minutes(5);
    const metrics = {
      ReadThrottles: table.metric("ReadThrottleEvents", { period, statistic: "Sum" }),
      WriteThrottles: table.metric("WriteThrottleEvents", { period, statistic: "Sum" }),
      ActiveRunIndexWriteThrottles: table.metric("WriteThrottleEvents", {
        period,
        statistic: "Sum",
        dimensionsMap: { TableName: table.tableName, GlobalSecondaryIndexName: "gsi2" },
      }),
    };
    const topic =
      props.topicArn === undefined ? undefined : Topic.fromTopicArn(this, "Topic", props.topicArn);
    this.alarms = Object.entries(metrics).map(([name, metric]) => {
      const alarm = new Alarm(this, name, {
        metric,
        threshold: 0,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
        alarmDescription: `ClusterCode store: ${name} on the table (see docs/aws.md, Sizing)`,
      });
      if (topic !== undefined) alarm.addAlarmAction(new SnsAction(topic));
      return alarm;
    });
  }
}
