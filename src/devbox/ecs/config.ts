import { ECSClient } from "@aws-sdk/client-ecs";
import { EcsError } from "./error.js";
import { EcsExecutor, type EcsExecutorOptions } from "./executor.js";
import { gitHostBaseUrl } from "../git-host.js";
import { AGENT_ENV } from "../protocol.js";

/** The environment variables that configure the ECS executor. */
export const ECS_ENV = {
  /** `ecs` selects this executor (the runtime reads it; default `local`). */
  executor: "CLUSTERCODE_EXECUTOR",
  cluster: "CLUSTERCODE_ECS_CLUSTER",
  capacityProvider: "CLUSTERCODE_ECS_CAPACITY_PROVIDER",
  /** Comma-separated; when set, tasks use awsvpc networking in these subnets. */
  subnets: "CLUSTERCODE_ECS_SUBNETS",
  /** Comma-separated security group ids for awsvpc tasks. */
  securityGroups: "CLUSTERCODE_ECS_SECURITY_GROUPS",
  executionRoleArn: "CLUSTERCODE_ECS_EXECUTION_ROLE_ARN",
  taskRoleArn: "CLUSTERCODE_ECS_TASK_ROLE_ARN",
  image: "CLUSTERCODE_DEVBOX_IMAGE",
  /** Optional CloudWatch log group of DevBox containers. */
  logGroup: "CLUSTERCODE_ECS_LOG_GROUP",
  /** Optional; default the account of the execution role's ARN. */
  account: "CLUSTERCODE_AWS_ACCOUNT_ID",
  region: "AWS_REGION",
  /** Optional endpoint override (tests, local emulators). */
  endpoint: "CLUSTERCODE_ECS_ENDPOINT",
} as const;

/** What the runtime may be told by the executor (see {@link EcsExecutorOptions}). */
export type EcsCallbacks = Pick<
  EcsExecutorOptions,
  "onStatus" | "onLost" | "pollIntervalMs" | "placement" | "warm"
>;

const ROLE_ARN = /^arn:(aws[a-z-]*):iam::(\d{12}):role\/[\w+=,.@/-]+$/;

/** The ECS settings as read from the environment, before they are known to be complete. */
interface EcsSettings {
  cluster: string;
  capacityProvider: string;
  executionRoleArn: string;
  taskRoleArn: string;
  image: string;
  region: string;
  /** The execution role's ARN matched by {@link ROLE_ARN}: its partition and account. */
  role: RegExpExecArray | null;
  account: string | undefined;
  endpoint: string | undefined;
  subnets: string[] | undefined;
  securityGroups: string[] | undefined;
}

/** The items of a comma-separated variable; undefined when it names none. */
function readList(env: NodeJS.ProcessEnv, name: string): string[] | undefined {
  const items = (env[name] ?? "")
    .split(",")
    .map((item) => item.trim())
    .filter(Boolean);
  return items.length === 0 ? undefined : items;
}

/** Reads the ECS settings, adding to `problems` every missing or malformed variable. */
function readEcsSettings(env: NodeJS.ProcessEnv, problems: string[]): EcsSettings {
  const required = (name: string): string => {
    const value = env[name]?.trim();
    if (value === undefined || value === "") problems.push(`${name} is not set`);
    return value ?? "";
  };
  const cluster = required(ECS_ENV.cluster);
  const capacityProvider = required(ECS_ENV.capacityProvider);
  const executionRoleArn = required(ECS_ENV.executionRoleArn);
  const taskRoleArn = required(ECS_ENV.taskRoleArn);
  const image = required(ECS_ENV.image);
  const region = required(ECS_ENV.region);
  const role = ROLE_ARN.exec(executionRoleArn);
  if (executionRoleArn !== "" && role === null) {
    problems.push(`${ECS_ENV.executionRoleArn} must be an IAM role ARN, got "${executionRoleArn}"`);
  }
  if (taskRoleArn !== "" && !ROLE_ARN.test(taskRoleArn)) {
    problems.push(`${ECS_ENV.taskRoleArn} must be an IAM role ARN, got "${taskRoleArn}"`);
  }
  const account = env[ECS_ENV.account]?.trim() || role?.[2];
  if (account !== undefined && !/^\d{12}$/.test(account)) {
    problems.push(`${ECS_ENV.account} must be a 12-digit account id, got "${account}"`);
  }
  const endpoint = env[ECS_ENV.endpoint]?.trim() || undefined;
  if (endpoint !== undefined && !URL.canParse(endpoint)) {
    problems.push(`${ECS_ENV.endpoint} must be a URL, got "${endpoint}"`);
  }
  const subnets = readList(env, ECS_ENV.subnets);
  const securityGroups = readList(env, ECS_ENV.securityGroups);
  if (securityGroups !== undefined && subnets === undefined) {
    problems.push(`${ECS_ENV.securityGroups} needs ${ECS_ENV.subnets} (awsvpc networking)`);
  }
  const names = { cluster, capacityProvider, executionRoleArn, taskRoleArn, image, region };
  return { ...names, role, account, endpoint, subnets, securityGroups };
}

/** The agent timing variables passed on to DevBoxes, those that are set. */
function readAgentEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const agentEnv: Record<string, string> = {};
  for (const name of [AGENT_ENV.heartbeatMs, AGENT_ENV.lapseMs]) {
    const value = env[name];
    if (value !== undefined && value !== "") agentEnv[name] = value;
  }
  return agentEnv;
}

/**
 * An {@link EcsExecutor} configured from the environment ({@link ECS_ENV}). Throws an EcsError
 * `invalid_config` naming every missing or malformed variable.
 */
export function ecsExecutorFromEnv(
  env: NodeJS.ProcessEnv,
  callbacks: EcsCallbacks = {},
): EcsExecutor {
  const problems: string[] = [];
  const settings = readEcsSettings(env, problems);
  if (problems.length > 0) {
    throw new EcsError("invalid_config", `ECS executor: ${problems.join("; ")}`);
  }
  const { region, endpoint, role, account, subnets, securityGroups } = settings;
  const logGroup = env[ECS_ENV.logGroup]?.trim() || undefined;
  return new EcsExecutor({
    ...callbacks,
    client: new ECSClient({ region, ...(endpoint === undefined ? {} : { endpoint }) }),
    cluster: settings.cluster,
    capacityProvider: settings.capacityProvider,
    executionRoleArn: settings.executionRoleArn,
    taskRoleArn: settings.taskRoleArn,
    defaultImage: settings.image,
    region,
    secretArnPrefix: `arn:${role?.[1] ?? "aws"}:secretsmanager:${region}:${account ?? ""}:secret:`,
    agentEnv: readAgentEnv(env),
    gitHost: gitHostBaseUrl(env),
    ...(subnets === undefined ? {} : { subnets }),
    ...(securityGroups === undefined ? {} : { securityGroups }),
    ...(logGroup === undefined ? {} : { logGroup }),
  });
}
