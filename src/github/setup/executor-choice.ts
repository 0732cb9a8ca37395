import type { EcsStatus } from "../../devbox/ecs/status.js";
import { taskPrivateAddress } from "../../devbox/ecs/task-address.js";
import type { DevBoxEvent } from "../../devbox/hub/events.js";
import type { LocalExecutor } from "../../devbox/local/executor.js";
import type { ContainerExecutor } from "../../devbox/container/executor.js";
import type { EcsWarmOptions } from "../../devbox/ecs/warm-tasks.js";
import type { ClosableExecutor } from "../../runtime/devbox-side.js";
import type { Settings } from "../../settings/index.js";
import { TokenScrubbingExecutor } from "./clone-source.js";

/** The DevBox executor of the app and how DevBoxes reach it. */
export interface ExecutorChoice {
  executor: ClosableExecutor;
  /** Where the hub listens (an address DevBoxes can reach) and on which port. */
  hubHost: string;
  hubPort: number;
  /** Whether DevBoxes get the repository as `owner/name` and fetch their token from the hub. */
  tokenFromHub: boolean;
}

/** The decoded settings that choose the executor and the hub's address for ECS DevBoxes. */
export type ExecutorSettings = Pick<
  Settings["devboxes"],
  "executor" | "internalHost" | "internalPort"
>;

/**
 * Local DevBoxes by default (the hub on 127.0.0.1, the clone URL carrying a token), under
 * bubblewrap or, with `CLUSTERCODE_EXECUTOR=container`, in local containers; with
 * `CLUSTERCODE_EXECUTOR=ecs`, ECS tasks that reach the hub on `CLUSTERCODE_INTERNAL_HOST`
 * (default: this task's private IPv4 from the ECS metadata endpoint) and
 * `CLUSTERCODE_INTERNAL_PORT`, and fetch their repository token from it. `devboxes` are those
 * settings, decoded at start; `env` is what the ECS executor is configured from.
 */
export async function chooseExecutor(
  { env, devboxes }: { env: NodeJS.ProcessEnv; devboxes: ExecutorSettings },
  local: () => LocalExecutor | ContainerExecutor,
  onLost: (event: DevBoxEvent) => void,
  onNotice: (devboxId: string, notice: string | undefined) => void = () => {},
  warm?: EcsWarmOptions,
): Promise<ExecutorChoice> {
  if (devboxes.executor !== "ecs") {
    return {
      executor: new TokenScrubbingExecutor(local()),
      hubHost: "127.0.0.1",
      hubPort: 0,
      tokenFromHub: false,
    };
  }
  // Loaded only for ECS: the ECS SDK client is not needed by an app running local DevBoxes.
  const { ecsExecutorFromEnv } = await import("../../devbox/ecs/config.js");
  const executor = ecsExecutorFromEnv(env, {
    // Placement waits are shown on the run's status comment until the task starts.
    onStatus: (status) => onNotice(status.devboxId, describeEcsStatus(status)),
    // The engine reads "lost" the same whatever the cause; the hub's reasons are the narrower type.
    onLost: (devboxId, reason) =>
      onLost({ type: "devbox.lost", devboxId, reason: reason as "never-connected" }),
    // Warm tasks (`devbox.warm`), bounded by CLUSTERCODE_WARM_MAX as local ones are.
    ...(warm === undefined ? {} : { warm }),
  });
  const hubHost = devboxes.internalHost ?? (await taskPrivateAddress(env));
  if (hubHost === undefined) {
    throw new Error(
      "CLUSTERCODE_EXECUTOR=ecs needs CLUSTERCODE_INTERNAL_HOST outside ECS (no ECS_CONTAINER_METADATA_URI_V4)",
    );
  }
  return {
    executor,
    hubHost,
    hubPort: devboxes.internalPort,
    tokenFromHub: true,
  };
}

/** A line for the status comment about an ECS task, or undefined once there is nothing to say. */
export function describeEcsStatus(status: EcsStatus): string | undefined {
  switch (status.state) {
    case "started":
      return undefined;
    case "waiting-for-capacity":
      return `waiting for capacity (${status.reason}); retry ${status.attempt} in ${Math.ceil(status.retryInMs / 1000)} s`;
    case "placement-failed":
      return `no capacity after every retry (${status.reason})`;
    case "stopped":
      return `task stopped: ${status.reason}`;
  }
}
