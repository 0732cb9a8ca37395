import {
  DefaultStackSynthesizer,
  Stack,
  type IStackSynthesizer,
  type StackProps,
} from "aws-cdk-lib";
import type { Table } from "aws-cdk-lib/aws-dynamodb";
import type { Bucket } from "aws-cdk-lib/aws-s3";
import { Vpc, type IVpc } from "aws-cdk-lib/aws-ec2";
import type { Construct } from "constructs";
import { AppService } from "./app-service.js";
import { DevBoxCapacity } from "./devbox-capacity.js";
import { readSettings } from "./settings.js";
import { createSetupCacheBucket } from "./setup-cache-bucket.js";
import { StoreAlarms } from "./store-alarms.js";
import { createStoreTable } from "./store-table.js";
import { viewAs } from "./view-as.js";

/**
 * ClusterCode Workflows on AWS: the store's DynamoDB table and its throttling alarms, the DevBox
 * cluster on EC2 capacity, and the app's replicas behind an HTTPS load balancer. Settings come
 * from context (see `readSettings`, sized as docs/aws.md works out); a missing certificate or
 * image becomes a template parameter.
 */
export class ClusterCodeStack extends Stack {
  /** The store's table. */
  readonly table: Table;
  /** The DevBox cluster, capacity and roles. */
  readonly devboxes: DevBoxCapacity;
  /** The app service, its load balancer and secrets. */
  readonly app: AppService;
  /** Where ECS DevBoxes' setup cache is kept, read and written by the app only. */
  readonly setupCache: Bucket;

  constructor(scope: Construct, id: string, props: StackProps = {}) {
    // No assets to publish and no bootstrap rule: the template deploys with plain CloudFormation.
    super(scope, id, {
      synthesizer: viewAs<IStackSynthesizer>(
        new DefaultStackSynthesizer({ generateBootstrapVersionRule: false }),
      ),
      ...props,
    });
    const settings = readSettings(this);
    const vpc = viewAs<IVpc>(new Vpc(this, "Vpc", { maxAzs: 2, natGateways: 1 }));
    const table = createStoreTable(this, {
      billing: settings.tableBilling,
      pointInTimeRecovery: settings.pointInTimeRecovery,
    });
    this.table = table;
    new StoreAlarms(this, "StoreAlarms", { table, topicArn: settings.alarmTopicArn });
    const devboxes = (this.devboxes = new DevBoxCapacity(this, "DevBoxes", {
      vpc,
      instanceType: settings.devboxInstanceType,
      minInstances: settings.devboxMinInstances,
      maxInstances: settings.devboxMaxInstances,
      targetCapacityPercent: settings.devboxTargetCapacityPercent,
    }));
    this.app = new AppService(this, "App", {
      vpc,
      table,
      devboxes,
      image: settings.appImage,
      devboxImage: settings.devboxImage,
      certificateArn: settings.certificateArn,
      replicas: settings.replicas,
      maxReplicas: settings.maxReplicas,
      cpuTargetPercent: settings.appCpuTargetPercent,
      memoryTargetPercent: settings.appMemoryTargetPercent,
    });
    const appTask = this.app.service.taskDefinition;
    this.setupCache = createSetupCacheBucket(this, appTask.taskRole);
    // The hub keeps ECS DevBoxes' setup cache there, for them (src/devbox/hub/cache/).
    appTask.defaultContainer?.addEnvironment(
      "CLUSTERCODE_SETUP_CACHE_BUCKET",
      this.setupCache.bucketName,
    );
  }
}
