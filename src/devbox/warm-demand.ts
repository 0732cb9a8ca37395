import { devboxShapeOf, type DevBoxShape } from "../engine/devbox-shape.js";
import type { Workflow } from "../workflow/workflow.schema.js";

/**
 * One pool of warm DevBoxes: the repository, the default branch whose head they are cloned at,
 * how many to keep, and the spec fields that shape a DevBox before any run claims it.
 */
export interface WarmSpec {
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
 * The warm spec of `repo` that a DevBox spec asks for (count 0 when it asks for none; the
 * branch empty when it does not say): the same for a claim and for a declaration.
 */
export function warmSpecOf(
  repo: string,
  shape: Pick<
    DevBoxShape,
    "warm" | "setup" | "secrets" | "image" | "cpu" | "memoryMiB" | "networkAllow"
  >,
): WarmSpec {
  return {
    repo,
    branch: shape.warm?.branch ?? "",
    count: shape.warm?.count ?? 0,
    setup: shape.setup,
    secrets: shape.secrets,
    ...(shape.image === undefined ? {} : { image: shape.image }),
    ...(shape.cpu === undefined ? {} : { cpu: shape.cpu }),
    ...(shape.memoryMiB === undefined ? {} : { memoryMiB: shape.memoryMiB }),
    ...(shape.networkAllow === undefined ? {} : { networkAllow: shape.networkAllow }),
  };
}

/**
 * The warm DevBoxes `workflows` (read from `repo`'s default branch `defaultBranch`) ask for:
 * one spec per distinct DevBox shape with `devbox.warm` above 0, the largest count when two
 * workflows share a shape. The DevBox spec is the one the engine claims (see devboxShapeOf).
 */
export function warmSpecsOf(
  repo: string,
  defaultBranch: string,
  workflows: readonly Workflow[],
): WarmSpec[] {
  const specs = new Map<string, WarmSpec>();
  for (const workflow of workflows) {
    const spec = warmSpecOf(repo, devboxShapeOf(workflow, defaultBranch));
    if (spec.count === 0) continue;
    const shape = JSON.stringify({ ...spec, count: 0 });
    const known = specs.get(shape);
    if (known === undefined || known.count < spec.count) specs.set(shape, spec);
  }
  return [...specs.values()];
}

/** Told the warm specs a repository's default branch asks for now (none: drop its pools). */
export type WarmDemandListener = (repo: string, specs: readonly WarmSpec[]) => void;

/**
 * Where the app says which warm DevBoxes each repository's default branch asks for, each time
 * it reads that branch's workflows (at start, on install, on a push touching `.clustercode/`),
 * so that an executor's pool fills before the first claim instead of learning its spec from
 * it. Executor-agnostic: the local pool and an ECS one listen the same way.
 */
export class WarmDemand {
  readonly #listeners = new Set<WarmDemandListener>();
  readonly #declared = new Map<string, readonly WarmSpec[]>();

  /**
   * Calls `listener` with every declaration from now on, and at once with those made before
   * (an executor opened after the app read a repository still fills its pool).
   */
  listen(listener: WarmDemandListener): void {
    this.#listeners.add(listener);
    for (const [repo, specs] of this.#declared) listener(repo, specs);
  }

  /** Says that the default branch of `repo` asks for exactly `specs` (replacing what it said). */
  declare(repo: string, specs: readonly WarmSpec[]): void {
    if (specs.length === 0) this.#declared.delete(repo);
    else this.#declared.set(repo, specs);
    for (const listener of this.#listeners) listener(repo, specs);
  }

  /** What the default branch of `repo` was last said to ask for. */
  declared(repo: string): readonly WarmSpec[] {
    return this.#declared.get(repo) ?? [];
  }
}
