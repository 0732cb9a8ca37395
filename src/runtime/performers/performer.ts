import type { DiffSource } from "../../agents/diff-source.js";
import type { DevBoxExecutor } from "../../devbox/executor.js";
import type { DevBoxHub } from "../../devbox/hub/hub.js";
import type { Effect, RunEvent } from "../../engine/model.js";
import type { Store } from "../../store/store.js";
import type { DevBoxOwnership } from "../devbox-leases.js";
import type { DevBoxRegistry } from "../devbox-registry.js";
import type { Judge } from "../judge.js";
import type { EventSink } from "../ports.js";
import type { RunRepository } from "../../store/run-repository.js";

/** Where DevBoxes clone from and what they are given. */
export interface DevBoxSource {
  /** A path or URL of the run's source repository. */
  repositoryOf(runId: string): Promise<string>;
  /** The environment secrets are copied from, by name. */
  env: NodeJS.ProcessEnv;
}

/** What performers work with, passed explicitly. */
export interface PerformerDeps {
  store: Store;
  hub: DevBoxHub;
  executor: DevBoxExecutor;
  /** The DevBoxes this process runs; the hub reports to it. */
  registry: DevBoxRegistry;
  judge: Judge;
  source: DevBoxSource;
  now: () => number;
  /**
   * DevBox ownership in the store, when replicas share it: a claim starts its DevBox only under
   * its lease, and a DevBox whose lease another replica took is stopped. Without, this process
   * is the only one (the CLI's state directory is held by one process).
   */
  leases?: DevBoxOwnership;
  /**
   * Where judges' diffs come from, asked with the run's repository as the store names it
   * (a local path, or owner/name on GitHub); without one a judge reads no diff.
   */
  diffs?: DiffSource;
}

/** What a performer is handed: its dependencies, the runs, and the run the effect is of. */
export interface PerformContext extends PerformerDeps {
  runs: RunRepository;
  runId: string;
  /**
   * Where DevBox events of a claimed DevBox go (the registry keeps it); follow-up events are
   * returned, not offered here.
   */
  events: EventSink;
}

/**
 * What performing an effect gave: the receipt's record, the events that follow at once (a
 * DevBox that could not start), and one that comes later (a judge's verdict).
 */
export interface Performed {
  receipt: unknown;
  follow?: RunEvent[];
  later?: Promise<RunEvent>;
}

/** Performs effects of one kind. */
export type Performer<T extends Effect["type"]> = (
  context: PerformContext,
  effect: Extract<Effect, { type: T }>,
) => Promise<Performed>;

/** One performer per effect kind: a kind without one does not compile. */
export type PerformerTable = { [T in Effect["type"]]: Performer<T> };
