import { CfnParameter, type Stack } from "aws-cdk-lib";

/** What a deployment chooses; each comes from CDK context, else a template parameter. */
export interface DeploymentSettings {
  /** ACM certificate of the webhook endpoint (context `certificateArn`). */
  certificateArn: string;
  /** The app's image (context `appImage`). */
  appImage: string;
  /** The DevBox image (context `devboxImage`). */
  devboxImage: string;
  /** App replicas (context `replicas`, default 2). */
  replicas: number;
  /** DevBox instance type (context `devboxInstanceType`, default m6i.xlarge). */
  devboxInstanceType: string;
  /** Most DevBox instances (context `devboxMaxInstances`, default 10). */
  devboxMaxInstances: number;
}

/**
 * Reads the settings from context. A missing certificate or image becomes a CloudFormation
 * parameter, so that `npm run synth` works offline and the values are given at deploy time.
 */
export function readSettings(stack: Stack): DeploymentSettings {
  const context = (key: string): string | undefined => {
    const value: unknown = stack.node.tryGetContext(key);
    return typeof value === "string" && value !== "" ? value : undefined;
  };
  const number = (key: string, fallback: number): number => {
    const value: unknown = stack.node.tryGetContext(key);
    const parsed = typeof value === "number" ? value : Number(value ?? fallback);
    if (!Number.isInteger(parsed) || parsed < 1) {
      throw new Error(`context ${key} must be a positive integer, got ${String(value)}`);
    }
    return parsed;
  };
  const parameter = (id: string, description: string): string =>
    new CfnParameter(stack, id, { type: "String", description, minLength: 1 }).valueAsString;
  return {
    certificateArn:
      context("certificateArn") ??
      parameter("CertificateArn", "ACM certificate ARN of the HTTPS webhook listener"),
    appImage: context("appImage") ?? parameter("AppImage", "The app's container image"),
    devboxImage: context("devboxImage") ?? parameter("DevBoxImage", "The DevBox container image"),
    replicas: number("replicas", 2),
    devboxInstanceType: context("devboxInstanceType") ?? "m6i.xlarge",
    devboxMaxInstances: number("devboxMaxInstances", 10),
  };
}
