import { ArnFormat, Duration, Stack } from "aws-cdk-lib";
import { AutoScalingGroup } from "aws-cdk-lib/aws-autoscaling";
import {
  InstanceType,
  LaunchTemplate,
  SecurityGroup,
  UserData,
  type IVpc,
} from "aws-cdk-lib/aws-ec2";
import { AsgCapacityProvider, Cluster, EcsOptimizedImage } from "aws-cdk-lib/aws-ecs";
import { ManagedPolicy, PolicyStatement, Role, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import { LogGroup, RetentionDays } from "aws-cdk-lib/aws-logs";
import { Construct } from "constructs";

/** Prefix of every secret a DevBox may be given: `clustercode/<owner>/<repo>/<NAME>`. */
export const DEVBOX_SECRET_PREFIX = "clustercode/";

/**
 * The ECS agent's settings on DevBox instances, for fast starts: a cached image is used as it is
 * (and not cleaned up), and tasks get their own ENI, which ENI trunking (the `awsvpcTrunking`
 * account setting, see docs/warm-start.md) multiplies per instance.
 */
export const ECS_AGENT_CONFIG = [
  "ECS_IMAGE_PULL_BEHAVIOR=prefer-cached",
  "ECS_ENABLE_TASK_ENI=true",
] as const;

/** How many DevBox instances there may be, and how full managed scaling keeps them. */
export interface DevBoxCapacityProps {
  vpc: IVpc;
  instanceType: string;
  /** Fewest instances (0: none while no DevBox runs). */
  minInstances: number;
  maxInstances: number;
  /** The share of the instances' capacity managed scaling keeps reserved by tasks (1-100). */
  targetCapacityPercent: number;
}

/**
 * Where DevBoxes run: an ECS cluster whose capacity is an EC2 Auto Scaling group behind a
 * capacity provider with managed scaling (from `minInstances`, zero by default) and managed
 * termination protection (an instance running DevBoxes is not scaled in), the DevBox roles and
 * their log group.
 * The task role has no permissions at all: a DevBox's only credentials are its bearer token
 * for the internal API and the repository token it fetches there.
 */
export class DevBoxCapacity extends Construct {
  readonly cluster: Cluster;
  readonly capacityProvider: AsgCapacityProvider;
  /**
   * The DevBox tasks' (awsvpc): no inbound, and outbound only to the app's internal API (the app
   * adds that rule), so the hub's egress proxy is a DevBox's only way out.
   */
  readonly securityGroup: SecurityGroup;
  /** The instances' own: the ECS agent pulls images, fetches secrets and ships logs. */
  readonly instanceSecurityGroup: SecurityGroup;
  readonly taskRole: Role;
  readonly executionRole: Role;
  readonly logGroup: LogGroup;

  constructor(scope: Construct, id: string, props: DevBoxCapacityProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.cluster = new Cluster(this, "Cluster", { vpc: props.vpc });
    this.securityGroup = new SecurityGroup(this, "DevBoxSecurityGroup", {
      vpc: props.vpc,
      description: "DevBox tasks: no inbound; outbound to the app internal API only",
      allowAllOutbound: false,
    });
    this.instanceSecurityGroup = new SecurityGroup(this, "InstanceSecurityGroup", {
      vpc: props.vpc,
      description: "DevBox instances: no inbound; outbound for the ECS agent and image pulls",
      allowAllOutbound: true,
    });
    const userData = UserData.forLinux();
    // A DevBox starts from the image the instance already holds, without asking the registry
    // first (the image's tag is the task definition's, so a new image is a new tag).
    userData.addCommands(...ECS_AGENT_CONFIG.map((line) => `echo ${line} >> /etc/ecs/ecs.config`));
    const launchTemplate = new LaunchTemplate(this, "LaunchTemplate", {
      instanceType: new InstanceType(props.instanceType),
      machineImage: EcsOptimizedImage.amazonLinux2023(),
      userData,
      securityGroup: this.instanceSecurityGroup,
      requireImdsv2: true,
      // Tasks must not borrow the instance's role: IMDS is one hop away from the host only.
      httpPutResponseHopLimit: 1,
      role: new Role(this, "InstanceRole", {
        assumedBy: new ServicePrincipal("ec2.amazonaws.com"),
        managedPolicies: [
          ManagedPolicy.fromAwsManagedPolicyName(
            "service-role/AmazonEC2ContainerServiceforEC2Role",
          ),
        ],
      }),
    });
    const group = new AutoScalingGroup(this, "Instances", {
      vpc: props.vpc,
      launchTemplate,
      minCapacity: props.minInstances,
      maxCapacity: props.maxInstances,
    });
    this.capacityProvider = new AsgCapacityProvider(this, "CapacityProvider", {
      autoScalingGroup: group,
      enableManagedScaling: true,
      targetCapacityPercent: props.targetCapacityPercent,
      enableManagedTerminationProtection: true,
    });
    this.cluster.addAsgCapacityProvider(this.capacityProvider);

    this.logGroup = new LogGroup(this, "Logs", { retention: RetentionDays.ONE_MONTH });
    this.taskRole = new Role(this, "TaskRole", {
      assumedBy: new ServicePrincipal("ecs-tasks.amazonaws.com"),
      description: "DevBox tasks: deliberately without permissions",
    });
    this.executionRole = new Role(this, "ExecutionRole", {
      assumedBy: new ServicePrincipal("ecs-tasks.amazonaws.com"),
      description: "Pulls the DevBox image, writes its logs, reads clustercode/* secrets",
      maxSessionDuration: Duration.hours(1),
    });
    this.executionRole.addToPolicy(
      new PolicyStatement({ actions: ["ecr:GetAuthorizationToken"], resources: ["*"] }),
    );
    this.executionRole.addToPolicy(
      new PolicyStatement({
        actions: [
          "ecr:BatchCheckLayerAvailability",
          "ecr:GetDownloadUrlForLayer",
          "ecr:BatchGetImage",
        ],
        resources: [stack.formatArn({ service: "ecr", resource: "repository", resourceName: "*" })],
      }),
    );
    this.executionRole.addToPolicy(
      new PolicyStatement({
        actions: ["logs:CreateLogStream", "logs:PutLogEvents"],
        resources: [`${this.logGroup.logGroupArn}:*`],
      }),
    );
    this.executionRole.addToPolicy(
      new PolicyStatement({
        actions: ["secretsmanager:GetSecretValue"],
        resources: [
          stack.formatArn({
            service: "secretsmanager",
            resource: "secret",
            resourceName: `${DEVBOX_SECRET_PREFIX}*`,
            arnFormat: ArnFormat.COLON_RESOURCE_NAME,
          }),
        ],
      }),
    );
  }
}
