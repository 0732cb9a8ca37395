/**
 * The CDK app, synthesized offline (no account, no lookups), checked on its template: the store
 * table the code expects, the DevBox capacity, the app service, and above all the IAM
 * boundaries between the app and its DevBoxes.
 */
import { App, type CfnElement } from "aws-cdk-lib";
import { Match, Template } from "aws-cdk-lib/assertions";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Construct } from "constructs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClusterCodeStack } from "../../infra/lib/clustercode-stack.js";
import { TTL_ATTRIBUTE } from "../../infra/lib/store-table.js";
import { EXPIRY_ATTRIBUTE } from "../../src/store/dynamo-items.js";

const CERTIFICATE = "arn:aws:acm:eu-west-1:123456789012:certificate/abc";
type Statement = { Action: string | string[]; Resource: unknown; Condition?: unknown };

let stack: ClusterCodeStack;
let template: Template;
let outdir: string;
beforeAll(() => {
  outdir = mkdtempSync(join(tmpdir(), "clustercode-cdk-"));
  const app = new App({
    outdir,
    context: {
      certificateArn: CERTIFICATE,
      replicas: 3,
      appImage: "app:1",
      devboxImage: "devbox:1",
    },
  });
  stack = new ClusterCodeStack(app, "ClusterCode");
  app.synth();
  template = Template.fromStack(stack);
}, 60_000);
afterAll(() => rm(outdir, { recursive: true, force: true }));

const logicalId = (construct: Construct) =>
  stack.getLogicalId(construct.node.defaultChild as CfnElement);

/** Every statement of the policies attached to a role (inline or separate), by logical id. */
function statementsOf(roleId: string): Statement[] {
  const statements: Statement[] = [];
  for (const policy of Object.values(template.findResources("AWS::IAM::Policy"))) {
    const properties = policy.Properties as {
      Roles: unknown[];
      PolicyDocument: { Statement: Statement[] };
    };
    if (properties.Roles.some((role) => JSON.stringify(role) === JSON.stringify({ Ref: roleId }))) {
      statements.push(...properties.PolicyDocument.Statement);
    }
  }
  const role = template.findResources("AWS::IAM::Role")[roleId]?.Properties as {
    Policies?: { PolicyDocument: { Statement: Statement[] } }[];
  };
  for (const inline of role.Policies ?? []) statements.push(...inline.PolicyDocument.Statement);
  return statements;
}

const actionsOf = (statement: Statement) => [statement.Action].flat();

describe("infra: the CDK app", () => {
  it(
    "synthesizes offline to a template with parameters for what context did not give",
    {
      timeout: 60_000,
    },
    () => {
      expect(existsSync(join(outdir, "ClusterCode.template.json"))).toBe(true);
      const bare = new App({ outdir: mkdtempSync(join(tmpdir(), "clustercode-cdk-")) });
      const parameters = Template.fromStack(new ClusterCodeStack(bare, "Bare")).toJSON()
        .Parameters as Record<string, unknown>;
      expect(Object.keys(parameters)).toEqual(
        expect.arrayContaining(["CertificateArn", "AppImage", "DevBoxImage"]),
      );
      const written = JSON.parse(
        readFileSync(join(outdir, "ClusterCode.template.json"), "utf8"),
      ) as {
        Parameters: Record<string, unknown>;
      };
      expect(written.Parameters?.CertificateArn).toBeUndefined();
      // Deployable with plain CloudFormation: no CDK bootstrap version check.
      expect(Object.keys(parameters)).not.toContain("BootstrapVersion");
    },
  );

  it("has the store's table: pk/sk, gsi1 and gsi2, on-demand, point-in-time recovery, TTL on the store's expiry", () => {
    expect(TTL_ATTRIBUTE).toBe(EXPIRY_ATTRIBUTE);
    template.hasResourceProperties("AWS::DynamoDB::Table", {
      KeySchema: [
        { AttributeName: "pk", KeyType: "HASH" },
        { AttributeName: "sk", KeyType: "RANGE" },
      ],
      BillingMode: "PAY_PER_REQUEST",
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      TimeToLiveSpecification: { AttributeName: "ttl", Enabled: true },
      GlobalSecondaryIndexes: ["gsi1", "gsi2"].map((index) => ({
        IndexName: index,
        KeySchema: [
          { AttributeName: `${index}pk`, KeyType: "HASH" },
          { AttributeName: `${index}sk`, KeyType: "RANGE" },
        ],
        Projection: { ProjectionType: "ALL" },
      })),
    });
    template.hasResource("AWS::DynamoDB::Table", { DeletionPolicy: "Retain" });
  });

  it("alarms on the table's read, write and gsi2 write throttling", () => {
    template.resourceCountIs("AWS::CloudWatch::Alarm", 3);
    for (const [metric, index] of [
      ["ReadThrottleEvents", undefined],
      ["WriteThrottleEvents", undefined],
      ["WriteThrottleEvents", "gsi2"],
    ] as const) {
      template.hasResourceProperties("AWS::CloudWatch::Alarm", {
        MetricName: metric,
        Namespace: "AWS/DynamoDB",
        Threshold: 0,
        ComparisonOperator: "GreaterThanThreshold",
        Dimensions:
          index === undefined
            ? [Match.objectLike({ Name: "TableName" })]
            : Match.arrayWith([{ Name: "GlobalSecondaryIndexName", Value: index }]),
      });
    }
  });

  it("runs DevBoxes on an Auto Scaling group capacity provider with managed scaling", () => {
    template.hasResourceProperties("AWS::ECS::CapacityProvider", {
      AutoScalingGroupProvider: {
        ManagedScaling: Match.objectLike({ Status: "ENABLED", TargetCapacity: 100 }),
        ManagedTerminationProtection: "ENABLED",
      },
    });
    template.hasResourceProperties("AWS::AutoScaling::AutoScalingGroup", {
      MinSize: "0",
      MaxSize: "10",
    });
    template.hasResourceProperties("AWS::EC2::LaunchTemplate", {
      LaunchTemplateData: Match.objectLike({
        MetadataOptions: { HttpTokens: "required", HttpPutResponseHopLimit: 1 },
      }),
    });
  });

  it("starts DevBox instances' ECS agent on cached images, with task ENIs (for trunking)", () => {
    const [launchTemplate] = Object.values(template.findResources("AWS::EC2::LaunchTemplate"));
    const userData = JSON.stringify(
      (launchTemplate?.Properties as { LaunchTemplateData: { UserData: unknown } })
        .LaunchTemplateData.UserData,
    );
    expect(userData).toContain("echo ECS_IMAGE_PULL_BEHAVIOR=prefer-cached >> /etc/ecs/ecs.config");
    expect(userData).toContain("echo ECS_ENABLE_TASK_ENI=true >> /etc/ecs/ecs.config");
    // The cluster's own line, which the capacity provider adds, is still there.
    expect(userData).toContain("ECS_CLUSTER=");
  });

  it("runs N app replicas behind HTTPS, with the internal API open to DevBoxes only", () => {
    template.hasResourceProperties("AWS::ECS::Service", { DesiredCount: 3, LaunchType: "FARGATE" });
    // No auto scaling unless maxReplicas asks for it (see the sized stack below).
    template.resourceCountIs("AWS::ApplicationAutoScaling::ScalableTarget", 0);
    template.hasResourceProperties("AWS::ElasticLoadBalancingV2::Listener", {
      Port: 443,
      Protocol: "HTTPS",
      Certificates: [{ CertificateArn: CERTIFICATE }],
    });
    template.hasResourceProperties("AWS::ElasticLoadBalancingV2::TargetGroup", {
      Port: 3000,
      HealthCheckPath: "/healthz",
    });
    const ingress = JSON.stringify(template.findResources("AWS::EC2::SecurityGroup"));
    expect(ingress).toContain('"FromPort":8080');
    expect(ingress).toContain(logicalId(stack.devboxes.securityGroup));
    for (const name of ["APP_ID", "PRIVATE_KEY", "WEBHOOK_SECRET"]) {
      template.hasResourceProperties("AWS::SecretsManager::Secret", {
        Name: `clustercode-app/${name}`,
      });
    }
    template.hasResourceProperties("AWS::ECS::TaskDefinition", {
      ContainerDefinitions: [
        Match.objectLike({
          Environment: Match.arrayWith([{ Name: "CLUSTERCODE_EXECUTOR", Value: "ecs" }]),
          Secrets: Match.arrayWith([Match.objectLike({ Name: "PRIVATE_KEY" })]),
        }),
      ],
    });
  });

  it("lets DevBox tasks (awsvpc) out only to the app's internal API, no 0.0.0.0/0", () => {
    const devboxGroup = logicalId(stack.devboxes.securityGroup);
    const groups = template.findResources("AWS::EC2::SecurityGroup");
    const appGroup = Object.keys(groups).find((id) => id.startsWith("AppSecurityGroup"));
    const egress = (groups[devboxGroup]?.Properties as { SecurityGroupEgress?: unknown[] })
      .SecurityGroupEgress;
    expect(egress).toEqual([
      expect.objectContaining({
        DestinationSecurityGroupId: { "Fn::GetAtt": [appGroup, "GroupId"] },
        IpProtocol: "tcp",
        FromPort: 8080,
        ToPort: 8080,
      }),
    ]);
    // No separate egress rule opens the DevBoxes' group either.
    const separate = Object.values(template.findResources("AWS::EC2::SecurityGroupEgress"));
    for (const rule of separate) {
      expect(JSON.stringify(rule)).not.toContain(devboxGroup);
    }
    // The app's internal API takes them in, and runs them in that group, in private subnets.
    template.hasResourceProperties("AWS::EC2::SecurityGroupIngress", {
      GroupId: { "Fn::GetAtt": [appGroup, "GroupId"] },
      SourceSecurityGroupId: { "Fn::GetAtt": [devboxGroup, "GroupId"] },
      FromPort: 8080,
    });
    template.hasResourceProperties("AWS::ECS::TaskDefinition", {
      ContainerDefinitions: [
        Match.objectLike({
          Environment: Match.arrayWith([
            Match.objectLike({ Name: "CLUSTERCODE_ECS_SUBNETS" }),
            {
              Name: "CLUSTERCODE_ECS_SECURITY_GROUPS",
              Value: { "Fn::GetAtt": [devboxGroup, "GroupId"] },
            },
          ]),
        }),
      ],
    });
  });

  it("lets the app run only DevBox task definitions on the DevBox cluster and pass only their roles", () => {
    const statements = statementsOf(logicalId(stack.app.service.taskDefinition.taskRole));
    const cluster = { "Fn::GetAtt": [logicalId(stack.devboxes.cluster), "Arn"] };
    const granting = (action: string) => statements.filter((s) => actionsOf(s).includes(action));
    for (const action of ["ecs:RunTask", "ecs:StopTask", "ecs:DescribeTasks", "ecs:ListTasks"]) {
      expect(granting(action).length, action).toBeGreaterThan(0);
      for (const statement of granting(action)) {
        expect(statement.Condition, action).toEqual({ ArnEquals: { "ecs:cluster": cluster } });
      }
    }
    for (const statement of granting("ecs:RunTask")) {
      expect(JSON.stringify(statement.Resource)).toMatch(
        /:task-definition\/clustercode-devbox-\*:\*"\]\]\}$/,
      );
    }
    const passRole = granting("iam:PassRole");
    expect(passRole).toHaveLength(1);
    expect(passRole[0]?.Resource).toEqual([
      { "Fn::GetAtt": [logicalId(stack.devboxes.taskRole), "Arn"] },
      { "Fn::GetAtt": [logicalId(stack.devboxes.executionRole), "Arn"] },
    ]);
    const table = logicalId(stack.table);
    for (const statement of statements.filter((s) =>
      actionsOf(s).some((a) => a.startsWith("dynamodb:")),
    )) {
      expect(JSON.stringify(statement.Resource)).toContain(table);
      expect(JSON.stringify(statement.Resource).replaceAll(table, "")).not.toMatch(/Store|"\*"/);
    }
    const everything = statements.flatMap(actionsOf);
    expect(everything.filter((action) => action.endsWith(":*") || action === "*")).toEqual([]);
  });

  it("gives DevBox tasks no AWS permissions, and their execution role only clustercode/* secrets", () => {
    const taskRole = logicalId(stack.devboxes.taskRole);
    expect(statementsOf(taskRole)).toEqual([]);
    expect(template.findResources("AWS::IAM::Role")[taskRole]?.Properties).not.toHaveProperty(
      "ManagedPolicyArns",
    );
    const execution = statementsOf(logicalId(stack.devboxes.executionRole));
    const actions = execution.flatMap(actionsOf);
    expect(actions.filter((action) => /^(dynamodb|ecs|iam|sts):/.test(action))).toEqual([]);
    const secretStatements = execution.filter((s) =>
      actionsOf(s).some((a) => a.startsWith("secretsmanager:")),
    );
    expect(secretStatements).toHaveLength(1);
    expect(JSON.stringify(secretStatements[0]?.Resource)).toMatch(
      /:secret:clustercode\/\*"\]\]\}$/,
    );
    // No policy anywhere in the template is attached to a DevBox role and grants the store or ECS.
    const devboxRoles = [taskRole, logicalId(stack.devboxes.executionRole)].map((id) =>
      JSON.stringify({ Ref: id }),
    );
    for (const policy of Object.values(template.findResources("AWS::IAM::Policy"))) {
      const roles = (policy.Properties as { Roles: unknown[] }).Roles.map((r) => JSON.stringify(r));
      if (roles.some((role) => devboxRoles.includes(role))) {
        expect(JSON.stringify(policy.Properties)).not.toMatch(/"(dynamodb|ecs):/);
      }
    }
  });
  it("keeps ECS setup caches in a private bucket that only the app reads and writes", () => {
    const bucket = logicalId(stack.setupCache);
    template.hasResourceProperties("AWS::S3::Bucket", {
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
      LifecycleConfiguration: {
        Rules: Match.arrayWith([Match.objectLike({ ExpirationInDays: 14 })]),
      },
    });
    const s3 = (roleId: string) =>
      statementsOf(roleId).filter((s) => actionsOf(s).some((a) => a.startsWith("s3:")));
    const appRole = logicalId(stack.app.service.taskDefinition.taskRole);
    expect(s3(appRole).length).toBeGreaterThan(0);
    for (const statement of s3(appRole))
      expect(JSON.stringify(statement.Resource)).toContain(bucket);
    // Read and write: the hub restores entries and saves them.
    const appActions = s3(appRole).flatMap(actionsOf);
    expect(appActions).toEqual(expect.arrayContaining(["s3:GetObject*", "s3:PutObject"]));
    expect(s3(logicalId(stack.devboxes.taskRole))).toEqual([]);
    expect(s3(logicalId(stack.devboxes.executionRole))).toEqual([]);
    // The app is told the bucket: ECS DevBoxes' setup cache is kept there, by the hub.
    template.hasResourceProperties("AWS::ECS::TaskDefinition", {
      ContainerDefinitions: [
        Match.objectLike({
          Environment: Match.arrayWith([
            { Name: "CLUSTERCODE_SETUP_CACHE_BUCKET", Value: { Ref: bucket } },
          ]),
        }),
      ],
    });
  });
});
