import { parseMemoryMiB } from "../workflow/duration.js";
import type { Workflow } from "../workflow/workflow.schema.js";
import type { DevBoxSpec } from "./commands.js";

/** What of a claimed DevBox's spec its workflow alone decides (not the run's branches). */
export type DevBoxShape = Omit<DevBoxSpec, "branch" | "baseBranch" | "harnesses">;

/**
 * The part of every DevBox spec a run of `workflow` claims that comes from its `devbox:`
 * block, with `devbox.warm` kept at the head of `defaultBranch`. One function for the engine's
 * claims and for the warm demand the app declares from the default branch, so that the pool a
 * declaration fills is the pool a claim takes from.
 */
export function devboxShapeOf(workflow: Workflow, defaultBranch: string): DevBoxShape {
  const devbox = workflow.devbox;
  return {
    setup: devbox?.setup ?? [],
    secrets: devbox?.secrets ?? [],
    ...(devbox?.image === undefined ? {} : { image: devbox.image }),
    ...(devbox?.cpu === undefined ? {} : { cpu: devbox.cpu }),
    ...(devbox?.memory === undefined ? {} : { memoryMiB: parseMemoryMiB(devbox.memory) }),
    ...(devbox?.network === undefined ? {} : { networkAllow: devbox.network.allow }),
    ...(devbox?.warm === undefined ? {} : { warm: { count: devbox.warm, branch: defaultBranch } }),
    ...(devbox?.cache === undefined ? {} : { cache: devbox.cache }),
  };
}
