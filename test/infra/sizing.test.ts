/**
 * The sizing settings of docs/aws.md, chosen through context, as the synthesized template
 * carries them: provisioned billing with auto scaling, point-in-time recovery off, the app's
 * scale-out, the DevBox capacity provider's range and target, and the alarms' topic. The
 * defaults are checked in stack.test.ts.
 */
import { App } from "aws-cdk-lib";
import { Match, Template } from "aws-cdk-lib/assertions";
import { mkdtempSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClusterCodeStack } from "../../infra/lib/clustercode-stack.js";

const TOPIC = "arn:aws:sns:eu-west-1:123456789012:clustercode-alarms";
const BASE = { certificateArn: "arn:aws:acm:eu-west-1:123456789012:certificate/abc" };
const outdirs: string[] = [];

function synthesize(context: Record<string, unknown>): Template {
  const outdir = mkdtempSync(join(tmpdir(), "clustercode-cdk-"));
  outdirs.push(outdir);
  const app = new App({ outdir, context: { ...BASE, ...context } });
  return Template.fromStack(new ClusterCodeStack(app, "Sized"));
}

let template: Template;
beforeAll(() => {
  template = synthesize({
    replicas: 2,
    maxReplicas: 6,
    appCpuTargetPercent: 50,
    devboxMinInstances: 1,
    devboxMaxInstances: 125,
    devboxTargetCapacityPercent: 90,
    tableBilling: "provisioned",
    tableWriteMax: 2_000,
    pointInTimeRecovery: "false",
    alarmTopicArn: TOPIC,
  });
}, 60_000);
afterAll(() => Promise.all(outdirs.map((dir) => rm(dir, { recursive: true, force: true }))));

describe("infra: sizing from context", () => {
  it("provisions the table and each index with target-tracking auto scaling", () => {
    template.hasResourceProperties("AWS::DynamoDB::Table", {
      BillingMode: Match.absent(),
      ProvisionedThroughput: { ReadCapacityUnits: 25, WriteCapacityUnits: 25 },
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: false },
      TimeToLiveSpecification: { AttributeName: "ttl", Enabled: true },
      GlobalSecondaryIndexes: ["gsi1", "gsi2"].map((index) =>
        Match.objectLike({
          IndexName: index,
          ProvisionedThroughput: { ReadCapacityUnits: 25, WriteCapacityUnits: 25 },
        }),
      ),
    });
    const dynamoTargets = Object.values(
      template.findResources("AWS::ApplicationAutoScaling::ScalableTarget", {
        Properties: { ServiceNamespace: "dynamodb" },
      }),
    ).map((target) => target.Properties as Record<string, unknown>);
    // Table and two indexes, each read and write.
    expect(dynamoTargets).toHaveLength(6);
    const writes = dynamoTargets.filter((t) =>
      String(t.ScalableDimension).endsWith("WriteCapacityUnits"),
    );
    expect(writes.map((t) => [t.MinCapacity, t.MaxCapacity])).toEqual([
      [25, 2_000],
      [25, 2_000],
      [25, 2_000],
    ]);
    const reads = dynamoTargets.filter((t) =>
      String(t.ScalableDimension).endsWith("ReadCapacityUnits"),
    );
    expect(reads.map((t) => [t.MinCapacity, t.MaxCapacity])).toEqual([
      [25, 500],
      [25, 500],
      [25, 500],
    ]);
    template.hasResourceProperties("AWS::ApplicationAutoScaling::ScalingPolicy", {
      TargetTrackingScalingPolicyConfiguration: Match.objectLike({
        TargetValue: 70,
        PredefinedMetricSpecification: {
          PredefinedMetricType: "DynamoDBWriteCapacityUtilization",
        },
      }),
    });
  });

  it("scales the app out on CPU and memory between replicas and maxReplicas, never in", () => {
    template.hasResourceProperties("AWS::ECS::Service", { DesiredCount: 2 });
    template.hasResourceProperties("AWS::ApplicationAutoScaling::ScalableTarget", {
      ServiceNamespace: "ecs",
      MinCapacity: 2,
      MaxCapacity: 6,
    });
    for (const [metric, target] of [
      ["ECSServiceAverageCPUUtilization", 50],
      ["ECSServiceAverageMemoryUtilization", 70],
    ] as const) {
      template.hasResourceProperties("AWS::ApplicationAutoScaling::ScalingPolicy", {
        TargetTrackingScalingPolicyConfiguration: Match.objectLike({
          TargetValue: target,
          DisableScaleIn: true,
          ScaleOutCooldown: 600,
          PredefinedMetricSpecification: { PredefinedMetricType: metric },
        }),
      });
    }
  });

  it("sizes the DevBox capacity provider: instance range, target capacity, termination protection", () => {
    template.hasResourceProperties("AWS::AutoScaling::AutoScalingGroup", {
      MinSize: "1",
      MaxSize: "125",
      NewInstancesProtectedFromScaleIn: true,
    });
    template.hasResourceProperties("AWS::ECS::CapacityProvider", {
      AutoScalingGroupProvider: {
        AutoScalingGroupArn: Match.anyValue(),
        ManagedScaling: Match.objectLike({ Status: "ENABLED", TargetCapacity: 90 }),
        ManagedTerminationProtection: "ENABLED",
      },
    });
  });

  it("sends the alarms to the topic given", () => {
    const alarms = Object.values(template.findResources("AWS::CloudWatch::Alarm"));
    expect(alarms).toHaveLength(3);
    for (const alarm of alarms) {
      expect((alarm.Properties as { AlarmActions: unknown }).AlarmActions).toEqual([TOPIC]);
    }
  });

  it.each([
    [{ replicas: 3, maxReplicas: 2 }, "context replicas (3) must not exceed maxReplicas (2)"],
    [
      { devboxMinInstances: -1 },
      "context devboxMinInstances must be a non-negative integer, got -1",
    ],
    [
      { devboxTargetCapacityPercent: 120 },
      "context devboxTargetCapacityPercent must be at most 100, got 120",
    ],
    [
      { tableBilling: "reserved" },
      "context tableBilling must be on-demand or provisioned, got reserved",
    ],
    [
      { pointInTimeRecovery: "yes" },
      'context pointInTimeRecovery must be true or false, got "yes"',
    ],
    [
      { tableBilling: "provisioned", tableReadMin: 900 },
      "context tableReadMin (900) must not exceed tableReadMax (500)",
    ],
  ])("refuses context %j with a message naming the key", (context, message) => {
    expect(() => synthesize(context)).toThrow(message);
  });
});
