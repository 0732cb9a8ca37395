import type { StartRequest } from "./executor.js";

/** What a pool of warm DevBoxes is made from: the repository, its default branch and the spec. */
export interface WarmTemplate {
  /** The repository as the runtime names it (`owner/name`, or a local path). */
  repo: string;
  /** The default branch, whose head warm DevBoxes are cloned at. */
  branch: string;
  /** How many to keep ready (`devbox.warm`). */
  count: number;
  setup: string[];
  secrets: string[];
  image?: string;
  cpu?: number;
  memoryMiB?: number;
  networkAllow?: string[];
}

/**
 * The pool a template belongs to: DevBoxes are interchangeable only when the repository and
 * everything that shapes the box (image, size, setup, secrets, network) are the same. The count
 * and the branch are not part of it, so that a workflow that drops `warm` stops its pool.
 */
export function warmKey(template: WarmTemplate): string {
  const { repo, setup, secrets, image, cpu, memoryMiB, networkAllow } = template;
  return JSON.stringify([repo, image, cpu, memoryMiB, setup, [...secrets].sort(), networkAllow]);
}

/** What the pool of a claim keeps warm (count 0: none), or undefined without a repository. */
export function templateOf(request: StartRequest): WarmTemplate | undefined {
  const { spec } = request;
  if (request.repo === undefined) return undefined;
  return {
    repo: request.repo,
    // Without `warm`, the spec's pool (if any) is to stop: it keeps the branch it had.
    branch: spec.warm?.branch ?? "",
    count: spec.warm?.count ?? 0,
    setup: spec.setup,
    secrets: spec.secrets,
    ...(spec.image === undefined ? {} : { image: spec.image }),
    ...(spec.cpu === undefined ? {} : { cpu: spec.cpu }),
    ...(spec.memoryMiB === undefined ? {} : { memoryMiB: spec.memoryMiB }),
    ...(spec.networkAllow === undefined ? {} : { networkAllow: spec.networkAllow }),
  };
}
