import { Duration, RemovalPolicy, Stack } from "aws-cdk-lib";
import type { Table } from "aws-cdk-lib/aws-dynamodb";
import { Peer, Port, SecurityGroup, SubnetType, type IVpc } from "aws-cdk-lib/aws-ec2";
import {
  AwsLogDriver,
  ContainerImage,
  FargateService,
  FargateTaskDefinition,
  Secret as EcsSecret,
  type ICluster,
} from "aws-cdk-lib/aws-ecs";
import {
  ApplicationLoadBalancer,
  ApplicationProtocol,
  ListenerAction,
  ListenerCertificate,
} from "aws-cdk-lib/aws-elasticloadbalancingv2";
import { PolicyStatement } from "aws-cdk-lib/aws-iam";
import { LogGroup, RetentionDays } from "aws-cdk-lib/aws-logs";
import { Secret, type ISecret } from "aws-cdk-lib/aws-secretsmanager";
import { DnsRecordType } from "aws-cdk-lib/aws-servicediscovery";
import { Construct } from "constructs";
import type { DevBoxCapacity } from "./devbox-capacity.js";
import { viewAs } from "./view-as.js";

/** Port of the app's webhooks and `GET /healthz`. */
export const WEBHOOK_PORT = 3000;
/** Port of the internal DevBox API (the hub). */
export const INTERNAL_PORT = 8080;
/** The DevBox task definition families the executor registers (`src/devbox/ecs/task-definitions.ts`). */
export const DEVBOX_FAMILY_PREFIX = "clustercode-devbox-";
/** The app's own secrets; deliberately outside the `clustercode/` prefix DevBoxes may read. */
export const APP_SECRETS = ["APP_ID", "PRIVATE_KEY", "WEBHOOK_SECRET"] as const;

/** What the app service is built from. */
export interface AppServiceProps {
  vpc: IVpc;
  table: Table;
  devboxes: DevBoxCapacity;
  image: string;
  devboxImage: string;
  certificateArn: string;
  /** Replicas at deploy, and the fewest auto scaling keeps. */
  replicas: number;
  /** Replicas at most: above `replicas`, the service scales out on CPU and memory. */
  maxReplicas: number;
  /** Average CPU and memory utilisation (%) that scaling out tracks. */
  cpuTargetPercent: number;
  memoryTargetPercent: number;
}

/**
 * The app: N stateless Fargate replicas over the one table, webhooks through a public ALB on
 * HTTPS, and the internal API on {@link INTERNAL_PORT}, reachable only from DevBoxes. A DevBox
 * talks to the replica that started it (the hub keeps its DevBoxes in memory), so each replica
 * advertises its own task address; Cloud Map names the service for operators.
 */
export class AppService extends Construct {
  readonly service: FargateService;
  readonly loadBalancer: ApplicationLoadBalancer;
  readonly secrets: Record<(typeof APP_SECRETS)[number], Secret>;

  constructor(scope: Construct, id: string, props: AppServiceProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const { cluster, capacityProvider } = props.devboxes;
    this.secrets = Object.fromEntries(
      APP_SECRETS.map((name) => [
        name,
        new Secret(this, name, {
          secretName: `clustercode-app/${name}`,
          description: `GitHub App ${name} of ClusterCode Workflows`,
          removalPolicy: RemovalPolicy.RETAIN,
        }),
      ]),
    ) as Record<(typeof APP_SECRETS)[number], Secret>;

    const task = new FargateTaskDefinition(this, "Task", { cpu: 512, memoryLimitMiB: 1024 });
    const logGroup = new LogGroup(this, "Logs", { retention: RetentionDays.ONE_MONTH });
    task.addContainer("app", {
      image: ContainerImage.fromRegistry(props.image),
      logging: new AwsLogDriver({ logGroup, streamPrefix: "app" }),
      portMappings: [{ containerPort: WEBHOOK_PORT }, { containerPort: INTERNAL_PORT }],
      environment: {
        NODE_ENV: "production",
        PORT: String(WEBHOOK_PORT),
        AWS_REGION: stack.region,
        CLUSTERCODE_DYNAMODB_ENDPOINT: `https://dynamodb.${stack.region}.${stack.urlSuffix}`,
        CLUSTERCODE_DYNAMODB_TABLE: props.table.tableName,
        CLUSTERCODE_INTERNAL_PORT: String(INTERNAL_PORT),
        CLUSTERCODE_EXECUTOR: "ecs",
        CLUSTERCODE_ECS_CLUSTER: cluster.clusterName,
        CLUSTERCODE_ECS_CAPACITY_PROVIDER: capacityProvider.capacityProviderName,
        CLUSTERCODE_ECS_EXECUTION_ROLE_ARN: props.devboxes.executionRole.roleArn,
        CLUSTERCODE_ECS_TASK_ROLE_ARN: props.devboxes.taskRole.roleArn,
        CLUSTERCODE_ECS_LOG_GROUP: props.devboxes.logGroup.logGroupName,
        CLUSTERCODE_DEVBOX_IMAGE: props.devboxImage,
        // awsvpc DevBox tasks, each in the DevBox security group (egress to the hub only).
        CLUSTERCODE_ECS_SUBNETS: props.vpc
          .selectSubnets({ subnetType: SubnetType.PRIVATE_WITH_EGRESS })
          .subnetIds.join(","),
        CLUSTERCODE_ECS_SECURITY_GROUPS: props.devboxes.securityGroup.securityGroupId,
      },
      secrets: Object.fromEntries(
        APP_SECRETS.map((name) => [
          name,
          EcsSecret.fromSecretsManager(viewAs<ISecret>(this.secrets[name])),
        ]),
      ),
    });
    grantAppPermissions(task, props);

    // Its ingress names the DevBoxes' group, whose egress names this one: separate rule resources.
    const appSecurityGroup = new SecurityGroup(this, "SecurityGroup", {
      vpc: props.vpc,
      disableInlineRules: true,
    });
    appSecurityGroup.addIngressRule(
      Peer.securityGroupId(props.devboxes.securityGroup.securityGroupId),
      Port.tcp(INTERNAL_PORT),
      "DevBoxes reach the internal API",
    );
    props.devboxes.securityGroup.addEgressRule(
      Peer.securityGroupId(appSecurityGroup.securityGroupId),
      Port.tcp(INTERNAL_PORT),
      "DevBoxes reach the internal API (and through its egress proxy, their allow-list) only",
    );
    cluster.addDefaultCloudMapNamespace({ name: "clustercode.internal", vpc: props.vpc });
    this.service = new FargateService(this, "Service", {
      cluster: viewAs<ICluster>(cluster),
      taskDefinition: task,
      desiredCount: props.replicas,
      securityGroups: [appSecurityGroup],
      minHealthyPercent: 100,
      circuitBreaker: { rollback: true },
      cloudMapOptions: { name: "app", dnsRecordType: DnsRecordType.A },
    });

    scaleOut(this.service, props);

    this.loadBalancer = new ApplicationLoadBalancer(this, "LoadBalancer", {
      vpc: props.vpc,
      internetFacing: true,
    });
    this.loadBalancer.addListener("Http", {
      port: 80,
      defaultAction: ListenerAction.redirect({ protocol: "HTTPS", port: "443", permanent: true }),
    });
    const https = this.loadBalancer.addListener("Https", {
      port: 443,
      protocol: ApplicationProtocol.HTTPS,
      certificates: [ListenerCertificate.fromArn(props.certificateArn)],
    });
    https.addTargets("App", {
      port: WEBHOOK_PORT,
      protocol: ApplicationProtocol.HTTP,
      targets: [
        this.service.loadBalancerTarget({ containerName: "app", containerPort: WEBHOOK_PORT }),
      ],
      healthCheck: { path: "/healthz", interval: Duration.seconds(15) },
      deregistrationDelay: Duration.seconds(30),
    });
  }
}

/**
 * Above `replicas`, target tracking on average CPU and memory adds replicas up to `maxReplicas`,
 * at most one step every 10 minutes. Off by default (`maxReplicas` = `replicas`), because a
 * replica keeps the DevBoxes it started in memory: a replica that starts recovers every active
 * run and reports the DevBoxes it does not hold as lost (so each scale-out interrupts running
 * DevBox commands, which idempotent nodes re-run from their checkpoint), and a replica removed
 * leaves its runs' DevBoxes unreachable until their node's timeout. So it never scales in: set
 * the desired count down by hand at a quiet moment (a deploy replaces every replica anyway).
 */
function scaleOut(service: FargateService, props: AppServiceProps): void {
  if (props.maxReplicas <= props.replicas) return;
  const scaling = service.autoScaleTaskCount({
    minCapacity: props.replicas,
    maxCapacity: props.maxReplicas,
  });
  const common = { disableScaleIn: true, scaleOutCooldown: Duration.minutes(10) };
  scaling.scaleOnCpuUtilization("Cpu", {
    ...common,
    targetUtilizationPercent: props.cpuTargetPercent,
  });
  scaling.scaleOnMemoryUtilization("Memory", {
    ...common,
    targetUtilizationPercent: props.memoryTargetPercent,
  });
}

/**
 * The app task role: its table only; RunTask only DevBox task definitions and only on the DevBox
 * cluster; StopTask, DescribeTasks and ListTasks on that cluster; PassRole only the DevBox roles.
 */
function grantAppPermissions(task: FargateTaskDefinition, props: AppServiceProps): void {
  const stack = Stack.of(task);
  const { cluster, taskRole, executionRole } = props.devboxes;
  const role = task.taskRole;
  const onCluster = { ArnEquals: { "ecs:cluster": cluster.clusterArn } };
  const ecsArn = (resource: string) =>
    `arn:${stack.partition}:ecs:${stack.region}:${stack.account}:${resource}`;
  props.table.grantReadWriteData(role);
  // The store checks its table on start (CreateTable answers "in use", then DescribeTable).
  role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: ["dynamodb:CreateTable", "dynamodb:DescribeTable"],
      resources: [props.table.tableArn],
    }),
  );
  role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: ["ecs:RunTask"],
      resources: [ecsArn(`task-definition/${DEVBOX_FAMILY_PREFIX}*:*`)],
      conditions: onCluster,
    }),
  );
  role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: ["ecs:StopTask", "ecs:DescribeTasks"],
      resources: [ecsArn(`task/${cluster.clusterName}/*`)],
      conditions: onCluster,
    }),
  );
  role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: ["ecs:ListTasks"],
      resources: [ecsArn(`container-instance/${cluster.clusterName}/*`)],
      conditions: onCluster,
    }),
  );
  // Neither call supports resource-level permissions; PassRole below bounds what they can do.
  role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: ["ecs:RegisterTaskDefinition", "ecs:DescribeTaskDefinition"],
      resources: ["*"],
    }),
  );
  role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: ["ecs:TagResource"],
      resources: [
        ecsArn(`task/${cluster.clusterName}/*`),
        ecsArn(`task-definition/${DEVBOX_FAMILY_PREFIX}*:*`),
      ],
      conditions: { StringEquals: { "ecs:CreateAction": ["RunTask", "RegisterTaskDefinition"] } },
    }),
  );
  role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: ["iam:PassRole"],
      resources: [taskRole.roleArn, executionRole.roleArn],
      conditions: { StringEquals: { "iam:PassedToService": "ecs-tasks.amazonaws.com" } },
    }),
  );
}
