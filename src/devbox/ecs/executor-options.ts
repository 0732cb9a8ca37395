import type { ECSClient } from "@aws-sdk/client-ecs";
import type { EcsStatus } from "./status.js";
import type { EcsWarmOptions } from "./warm-tasks.js";
import type { RepositoryRef, TaskDefinitionSettings } from "./task-definitions.js";

/**
 * How an `EcsExecutor` is set up (see `ecsExecutorFromEnv` for the environment). Its own module,
 * so that the RunTask request builder reads it without importing the executor.
 */
export interface EcsExecutorOptions extends Omit<TaskDefinitionSettings, "networkMode"> {
  client: ECSClient;
  cluster: string;
  /** The EC2 (Auto Scaling group) capacity provider DevBoxes run on. */
  capacityProvider: string;
  /** With subnets, tasks use `awsvpc` networking in them; without, `bridge`. */
  subnets?: string[];
  securityGroups?: string[];
  /** Placement retries after `failures[]` (no capacity, memory): default 8, 2 s doubling to 60 s. */
  placement?: { attempts?: number; baseDelayMs?: number; maxDelayMs?: number };
  /** How often started tasks are checked with DescribeTasks; default 10 s. */
  pollIntervalMs?: number;
  /** The agent's timings passed on to DevBoxes (`CLUSTERCODE_DEVBOX_*_MS`), when set. */
  agentEnv?: Record<string, string>;
  /** Where `owner/name` repositories are cloned from; default https://github.com/. */
  gitHost?: URL;
  /** The GitHub repository of a StartRequest's `repository`; default `githubRepositoryOf`. */
  repositoryOf?: (repository: string) => RepositoryRef | undefined;
  /** Warm tasks (`devbox.warm`), once the hub's warm identities are attached; default none. */
  warm?: EcsWarmOptions;
  /** Told what each DevBox's task is doing: placed, waiting for capacity, stopped. */
  onStatus?: (status: EcsStatus) => void;
  /** Told when a started task stopped without being asked to (spot, crash, failed start). */
  onLost?: (devboxId: string, reason: string) => void;
}
