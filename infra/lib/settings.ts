import { CfnParameter, type Stack } from "aws-cdk-lib";

/** How the store's table is billed: on demand, or provisioned with auto scaling. */
export type TableBilling =
  | { mode: "on-demand" }
  | {
      mode: "provisioned";
      /** Read units: auto scaling keeps consumption at `targetPercent` of them, within min..max. */
      read: { min: number; max: number };
      /** Write units, likewise; each index gets the same range (every run write reaches gsi2). */
      write: { min: number; max: number };
      targetPercent: number;
    };

/** What a deployment chooses; each comes from CDK context, else a default or a template parameter. */
export interface DeploymentSettings {
  /** ACM certificate of the webhook endpoint (context `certificateArn`). */
  certificateArn: string;
  /** The app's image (context `appImage`). */
  appImage: string;
  /** The DevBox image (context `devboxImage`). */
  devboxImage: string;
  /** App replicas at least, and at deploy (context `replicas`, default 2). */
  replicas: number;
  /** App replicas at most (context `maxReplicas`, default `replicas`: no auto scaling). */
  maxReplicas: number;
  /** Average CPU % the app's scale-out tracks (context `appCpuTargetPercent`, default 60). */
  appCpuTargetPercent: number;
  /** Average memory % the app's scale-out tracks (context `appMemoryTargetPercent`, default 70). */
  appMemoryTargetPercent: number;
  /** DevBox instance type (context `devboxInstanceType`, default m6i.xlarge). */
  devboxInstanceType: string;
  /** Fewest DevBox instances (context `devboxMinInstances`, default 0). */
  devboxMinInstances: number;
  /** Most DevBox instances (context `devboxMaxInstances`, default 10). */
  devboxMaxInstances: number;
  /**
   * The share of the DevBox instances' capacity that managed scaling keeps reserved by tasks
   * (context `devboxTargetCapacityPercent`, default 100: no idle spare instance).
   */
  devboxTargetCapacityPercent: number;
  /** The table's billing (context `tableBilling`: `on-demand`, the default, or `provisioned`). */
  tableBilling: TableBilling;
  /** Point-in-time recovery of the table (context `pointInTimeRecovery`, default true). */
  pointInTimeRecovery: boolean;
  /** SNS topic the alarms notify (context `alarmTopicArn`); without it they only show. */
  alarmTopicArn: string | undefined;
}

/** Reads context values, refusing what is malformed with a message naming the key. */
class ContextReader {
  constructor(private readonly stack: Stack) {}

  string(key: string): string | undefined {
    const value: unknown = this.stack.node.tryGetContext(key);
    return typeof value === "string" && value !== "" ? value : undefined;
  }

  /** An integer from `min` (default 1) up, or `fallback` when absent. */
  integer(key: string, fallback: number, min = 1): number {
    const value: unknown = this.stack.node.tryGetContext(key);
    const parsed = typeof value === "number" ? value : Number(value ?? fallback);
    if (!Number.isInteger(parsed) || parsed < min) {
      const what = min === 0 ? "a non-negative integer" : "a positive integer";
      throw new Error(`context ${key} must be ${what}, got ${String(value)}`);
    }
    return parsed;
  }

  /** A percentage from 1 to 100. */
  percent(key: string, fallback: number): number {
    const parsed = this.integer(key, fallback);
    if (parsed > 100) throw new Error(`context ${key} must be at most 100, got ${parsed}`);
    return parsed;
  }

  boolean(key: string, fallback: boolean): boolean {
    const value: unknown = this.stack.node.tryGetContext(key);
    if (value === undefined) return fallback;
    if (value === true || value === "true") return true;
    if (value === false || value === "false") return false;
    throw new Error(`context ${key} must be true or false, got ${JSON.stringify(value)}`);
  }

  /** `min` at most `max`, both named in the message. */
  ordered(low: [string, number], high: [string, number]): void {
    if (low[1] > high[1]) {
      throw new Error(`context ${low[0]} (${low[1]}) must not exceed ${high[0]} (${high[1]})`);
    }
  }
}

/**
 * Reads the settings from context. A missing certificate or image becomes a CloudFormation
 * parameter, so that `npm run synth` works offline and the values are given at deploy time.
 * The sizing defaults are those docs/aws.md works out.
 */
export function readSettings(stack: Stack): DeploymentSettings {
  const read = new ContextReader(stack);
  const parameter = (id: string, description: string): string =>
    new CfnParameter(stack, id, { type: "String", description, minLength: 1 }).valueAsString;
  const replicas = read.integer("replicas", 2);
  const maxReplicas = read.integer("maxReplicas", replicas);
  read.ordered(["replicas", replicas], ["maxReplicas", maxReplicas]);
  const devboxMinInstances = read.integer("devboxMinInstances", 0, 0);
  const devboxMaxInstances = read.integer("devboxMaxInstances", 10);
  read.ordered(
    ["devboxMinInstances", devboxMinInstances],
    ["devboxMaxInstances", devboxMaxInstances],
  );
  return {
    certificateArn:
      read.string("certificateArn") ??
      parameter("CertificateArn", "ACM certificate ARN of the HTTPS webhook listener"),
    appImage: read.string("appImage") ?? parameter("AppImage", "The app's container image"),
    devboxImage:
      read.string("devboxImage") ?? parameter("DevBoxImage", "The DevBox container image"),
    replicas,
    maxReplicas,
    appCpuTargetPercent: read.percent("appCpuTargetPercent", 60),
    appMemoryTargetPercent: read.percent("appMemoryTargetPercent", 70),
    devboxInstanceType: read.string("devboxInstanceType") ?? "m6i.xlarge",
    devboxMinInstances,
    devboxMaxInstances,
    devboxTargetCapacityPercent: read.percent("devboxTargetCapacityPercent", 100),
    tableBilling: readTableBilling(read),
    pointInTimeRecovery: read.boolean("pointInTimeRecovery", true),
    alarmTopicArn: read.string("alarmTopicArn"),
  };
}

/**
 * On demand unless `tableBilling` is `provisioned`; then `tableReadMin`/`tableReadMax` (default
 * 25/500), `tableWriteMin`/`tableWriteMax` (default 25/1,500) and `tableTargetPercent` (70).
 */
function readTableBilling(read: ContextReader): TableBilling {
  const mode = read.string("tableBilling") ?? "on-demand";
  if (mode === "on-demand") return { mode };
  if (mode !== "provisioned") {
    throw new Error(`context tableBilling must be on-demand or provisioned, got ${mode}`);
  }
  const readUnits = {
    min: read.integer("tableReadMin", 25),
    max: read.integer("tableReadMax", 500),
  };
  const writeUnits = {
    min: read.integer("tableWriteMin", 25),
    max: read.integer("tableWriteMax", 1_500),
  };
  read.ordered(["tableReadMin", readUnits.min], ["tableReadMax", readUnits.max]);
  read.ordered(["tableWriteMin", writeUnits.min], ["tableWriteMax", writeUnits.max]);
  return {
    mode,
    read: readUnits,
    write: writeUnits,
    targetPercent: read.percent("tableTargetPercent", 70),
  };
}
