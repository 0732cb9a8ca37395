import type { StartRequest } from "./executor.js";
import { warmSpecOf, type WarmSpec } from "./warm-demand.js";

/** What a pool of warm DevBoxes is made from: the repository, its default branch and the spec. */
export type WarmTemplate = WarmSpec;

/**
 * The pool a template belongs to: DevBoxes are interchangeable only when the repository and
 * everything that shapes the box (image, size, setup, network) are the same. The count and the
 * branch are not part of it, so that a workflow that drops `warm` stops its pool. Nor are the
 * secrets: a warm DevBox is cloned and set up with none (they reach it at its claim), and the
 * hub takes the provider keys it holds out of a claim's list, so a claim would never find the
 * pool its workflow declared.
 */
export function warmKey(template: WarmTemplate): string {
  const { repo, setup, image, cpu, memoryMiB, networkAllow } = template;
  return JSON.stringify([repo, image, cpu, memoryMiB, setup, networkAllow]);
}

/** What the pool of a claim keeps warm (count 0: none), or undefined without a repository. */
export function templateOf(request: StartRequest): WarmTemplate | undefined {
  if (request.repo === undefined) return undefined;
  // Without `warm`, the spec's pool (if any) is to stop: it keeps the branch it had.
  return warmSpecOf(request.repo, request.spec);
}
