import type { KeyValuePair, RunTaskCommandInput } from "@aws-sdk/client-ecs";
import type { EcsExecutorOptions } from "./executor-options.js";
import { clientTokenOf, cloneUrlOf, startedByOf, tagValueOf } from "./names.js";
import { DEVBOX_CONTAINER } from "./task-definitions.js";
import type { StartRequest } from "../executor.js";
import { AGENT_ENV } from "../protocol.js";
import { WARM_ENV, type WarmIdentity } from "../warm-protocol.js";
import { WARM_HUB_TAG, WARM_STARTED_BY } from "./warm-orphans.js";

/** Environment variables the DevBox image's entrypoint reads besides the agent's own. */
export const ENTRYPOINT_ENV = {
  /** Base URL of the internal API. */
  apiUrl: "CLUSTERCODE_API_URL",
  /** The DevBox id, as the hub knows it. */
  devboxId: "CLUSTERCODE_DEVBOX_ID",
  /** The URL to clone: the hub's git route (authenticated by the DevBox's hub token). */
  repository: "CLUSTERCODE_REPOSITORY",
} as const;

/**
 * The RunTask request of placement attempt `attempt` of a DevBox: on the capacity provider,
 * under a client token and `startedBy` derived from the DevBox id, tagged with the run, and with
 * container overrides that carry only what the agent needs. Secrets are never among them: the
 * task definition points at Secrets Manager instead.
 */
export function runTaskInput(
  options: EcsExecutorOptions,
  request: StartRequest,
  taskDefinition: string,
  attempt: number,
): RunTaskCommandInput {
  const { devboxId, runId } = request;
  const environment = Object.entries(taskEnvironment(options, request)).map(([name, value]) => ({
    name,
    value,
  }));
  return {
    ...placement(options, taskDefinition, environment),
    clientToken: clientTokenOf(devboxId, attempt),
    startedBy: startedByOf(devboxId),
    tags: [
      { key: "clustercode:run", value: tagValueOf(runId) },
      { key: "clustercode:devbox", value: tagValueOf(devboxId) },
    ],
  };
}

/**
 * The container environment of a DevBox's task: what its agent needs, and the entrypoint's
 * variables. A warm task's claim hands over the same (see warm-tasks.ts).
 */
export function taskEnvironment(
  options: EcsExecutorOptions,
  request: StartRequest,
): Record<string, string> {
  const { devboxId, runId, spec } = request;
  // Only what the agent needs; secrets come from the task definition, never from here (provider
  // keys the hub holds not at all: the DevBox gets a placeholder and the hub's proxy).
  return {
    ...options.agentEnv,
    ...request.providerEnv,
    [AGENT_ENV.runId]: runId,
    [AGENT_ENV.token]: request.token,
    [AGENT_ENV.branch]: spec.branch,
    [AGENT_ENV.baseBranch]: spec.baseBranch,
    ...(spec.sha === undefined ? {} : { [AGENT_ENV.startSha]: spec.sha }),
    [AGENT_ENV.setup]: JSON.stringify(spec.setup),
    // No cache directory: the agent keeps `devbox.cache` through the hub, which scopes it.
    ...(spec.cache === undefined || spec.cache.length === 0
      ? {}
      : { [AGENT_ENV.setupCache]: JSON.stringify(spec.cache) }),
    [AGENT_ENV.secrets]: JSON.stringify(spec.secrets),
    ...(spec.harnesses === undefined
      ? {}
      : { [AGENT_ENV.harnesses]: JSON.stringify(spec.harnesses) }),
    // HTTPS goes out through the hub's egress proxy (the task's security group allows only the
    // hub): the allow-list is enforced there.
    ...(request.egressProxy === undefined
      ? {}
      : { HTTPS_PROXY: request.egressProxy, https_proxy: request.egressProxy }),
    [ENTRYPOINT_ENV.apiUrl]: request.apiUrl,
    [ENTRYPOINT_ENV.devboxId]: devboxId,
    [ENTRYPOINT_ENV.repository]: cloneUrlOf(request.repository, options.gitHost),
    // A clone from the hub's git route: the agent fetches and pushes there with its hub token.
    ...(request.repository.includes("/internal/devboxes/") ? { [AGENT_ENV.gitViaHub]: "1" } : {}),
  };
}

/**
 * What every DevBox task's RunTask has: the capacity provider, the placement, the network and
 * the container's environment.
 */
export function placement(
  options: EcsExecutorOptions,
  taskDefinition: string,
  environment: KeyValuePair[],
): RunTaskCommandInput {
  const { subnets, securityGroups } = options;
  return {
    cluster: options.cluster,
    taskDefinition,
    count: 1,
    capacityProviderStrategy: [{ capacityProvider: options.capacityProvider, weight: 1 }],
    // Fill the instances already up (their image cache warm) before another is started, and
    // leave the idle ones empty for managed scaling to take away.
    placementStrategy: [{ type: "binpack", field: "memory" }],
    enableECSManagedTags: true,
    overrides: { containerOverrides: [{ name: DEVBOX_CONTAINER, environment }] },
    ...(subnets === undefined
      ? {}
      : {
          networkConfiguration: {
            awsvpcConfiguration: {
              subnets,
              ...(securityGroups === undefined ? {} : { securityGroups }),
              assignPublicIp: "DISABLED" as const,
            },
          },
        }),
  };
}

/**
 * The RunTask request of a warm task: the DevBox's placement and task definition (without
 * secrets), no DevBox token, only its single-use warm identity, the clone URL of the hub's
 * read-only route for the default branch, and the setup to run while it waits.
 */
export function warmRunTaskInput(
  options: EcsExecutorOptions,
  taskDefinition: string,
  warm: { repo: string; branch: string; setup: readonly string[]; identity: WarmIdentity },
): RunTaskCommandInput {
  const { identity } = warm;
  const environment = Object.entries({
    ...options.agentEnv,
    [ENTRYPOINT_ENV.apiUrl]: identity.apiUrl,
    [ENTRYPOINT_ENV.repository]: identity.gitUrl,
    [WARM_ENV.warmId]: identity.warmId,
    [WARM_ENV.token]: identity.token,
    [WARM_ENV.branch]: warm.branch,
    [AGENT_ENV.setup]: JSON.stringify(warm.setup),
  }).map(([name, value]) => ({ name, value }));
  return {
    ...placement(options, taskDefinition, environment),
    clientToken: identity.warmId,
    // One `startedBy` for every warm task: ListTasks finds them all (see warm-orphans.ts).
    startedBy: WARM_STARTED_BY,
    tags: [
      { key: "clustercode:warm", value: tagValueOf(identity.warmId) },
      { key: WARM_HUB_TAG, value: tagValueOf(identity.apiUrl) },
      { key: "clustercode:repository", value: tagValueOf(warm.repo) },
    ],
  };
}
