import type { WorkflowNode } from "../workflow/workflow.schema.js";
import type { DevBoxCommand } from "./commands.js";
import { devboxShapeOf } from "./devbox-shape.js";
import type {
  ActiveNode,
  Effect,
  EvidenceEntry,
  HeldDevBox,
  NodeStop,
  RunDefinition,
  RunSnapshot,
  RunStatus,
  Visit,
} from "./model.js";

type EffectBody = Effect extends infer E ? (E extends Effect ? Omit<E, "seq"> : never) : never;

/**
 * The run-level moves a node kind makes when its work ends or must stop: routing along an edge,
 * ending the run, stopping the active node. `step` passes them in (from flow.ts and stop.ts) so
 * the node modules, which those import through the node table, never import them back.
 */
export interface RunMoves {
  /** Closes the active visit with `outcome` and moves the token along the matching edge. */
  completeNode(t: Transition, outcome: string, reason?: string): void;
  /** Ends the run: every DevBox released, every timer cancelled. */
  endRun(t: Transition, status: RunStatus, reason?: string, atNode?: string): void;
  /** Stops the active node before its work ended (timeout, run budget, run wall clock). */
  stopNode(t: Transition, stop: NodeStop, reason: string): void;
  /** A stopped node's checkpoint ended (or its grace ran out): the stop takes effect. */
  finishStop(t: Transition, stop: NodeStop, reason: string): void;
}

/**
 * One transition being computed: a private copy of the snapshot and the effects emitted so
 * far. Ids come from the snapshot's sequence, so the same events always give the same ids.
 */
export class Transition {
  readonly snapshot: RunSnapshot;
  readonly effects: Effect[] = [];

  constructor(
    readonly definition: RunDefinition,
    snapshot: RunSnapshot,
    readonly at: number,
    private readonly moves: RunMoves,
  ) {
    this.snapshot = structuredClone(snapshot);
    this.snapshot.updatedAt = at;
  }

  /** The workflow node `id`; the definition was validated, so it exists. */
  node(id: string): WorkflowNode {
    const node = this.definition.workflow.nodes[id];
    if (node === undefined) throw new Error(`programmer error: no node ${id}`);
    return node;
  }

  /** The active node; callers check there is one. */
  get active(): ActiveNode {
    const active = this.snapshot.active;
    if (active === undefined) throw new Error("programmer error: no active node");
    return active;
  }

  /** The visit of the active node. */
  get visit(): Visit {
    const visit = this.snapshot.visits[this.active.visit];
    if (visit === undefined) throw new Error("programmer error: no visit");
    return visit;
  }

  /** Closes the active visit with `outcome` and routes on (see {@link RunMoves}). */
  completeNode(outcome: string, reason?: string): void {
    this.moves.completeNode(this, outcome, reason);
  }

  /** Ends the run with `status` (see {@link RunMoves}). */
  endRun(status: RunStatus, reason?: string, atNode?: string): void {
    this.moves.endRun(this, status, reason, atNode);
  }

  /** Stops the active node (see {@link RunMoves}). */
  stopNode(stop: NodeStop, reason: string): void {
    this.moves.stopNode(this, stop, reason);
  }

  /** Lets a stopped node's stop take effect (see {@link RunMoves}). */
  finishStop(stop: NodeStop, reason: string): void {
    this.moves.finishStop(this, stop, reason);
  }

  /** Queues an effect and returns its sequence number. */
  emit(effect: EffectBody): number {
    const seq = this.snapshot.seq++;
    this.effects.push({ ...effect, seq });
    return seq;
  }

  /** Appends an evidence entry. */
  record(kind: string, detail: Omit<EvidenceEntry, "at" | "kind"> = {}): void {
    const entry: EvidenceEntry = { at: this.at, kind, ...detail };
    this.emit({ type: "evidence", evidenceSeq: this.snapshot.evidenceSeq++, entry });
  }

  setTimer(timerId: string, dueAt: number): void {
    this.snapshot.timers[timerId] = dueAt;
    this.emit({ type: "timer.set", timerId, dueAt });
  }

  cancelTimer(timerId: string | undefined): void {
    if (timerId === undefined || !(timerId in this.snapshot.timers)) return;
    delete this.snapshot.timers[timerId];
    this.emit({ type: "timer.cancel", timerId });
  }

  /** Asks for a new DevBox on `branch`, created from the run branch or the base branch. */
  claimDevBox(branch: string): HeldDevBox {
    const id = `d${this.snapshot.seq}`;
    const { branchPushed, lastSha } = this.snapshot;
    const base = branchPushed ? this.snapshot.branch : this.definition.baseBranch;
    // Once a checkpoint was pushed, a DevBox starts on the last one and on nothing else.
    const sha = branchPushed ? lastSha : undefined;
    const { workflow, baseBranch } = this.definition;
    const room = this.agentRoomUsd();
    this.emit({
      type: "devbox.claim",
      devboxId: id,
      spec: {
        branch,
        baseBranch: base,
        ...(sha === undefined ? {} : { sha }),
        ...devboxShapeOf(workflow, baseBranch),
        ...harnessesOf(this.definition),
      },
      ...(room === undefined
        ? {}
        : { spend: { roomUsd: room, countedUsd: this.snapshot.proxiedUsd ?? 0 } }),
    });
    this.record("devbox.claimed", { devbox: id, branch, ...(sha === undefined ? {} : { sha }) });
    return { id, branch, ready: false, ...(sha === undefined ? {} : { sha }) };
  }

  releaseDevBox(devbox: HeldDevBox | undefined): void {
    if (devbox === undefined) return;
    this.emit({ type: "devbox.release", devboxId: devbox.id });
    this.record("devbox.released", { devbox: devbox.id });
  }

  /** The run's DevBox, or a prototype variant's, with this id. */
  heldDevBox(devboxId: string): HeldDevBox | undefined {
    if (this.snapshot.devbox?.id === devboxId) return this.snapshot.devbox;
    const progress = this.snapshot.active?.progress;
    if (progress?.kind !== "prototype") return undefined;
    return progress.variants.find((variant) => variant.devbox.id === devboxId)?.devbox;
  }

  /**
   * The commits a verdict or answer judges now: the run branch's head (its last checkpoint, or
   * the base when nothing was checkpointed yet) and the base it started from, when known.
   */
  judgedShas(headSha?: string): { headSha?: string; baseSha?: string } {
    const s = this.snapshot;
    const head = headSha ?? s.lastSha ?? s.baseSha;
    return {
      ...(head === undefined ? {} : { headSha: head }),
      ...(s.baseSha === undefined ? {} : { baseSha: s.baseSha }),
    };
  }

  /** What is left of the run's `budget.max_cost_usd`, when it has one. */
  budgetRoomUsd(): number | undefined {
    const max = this.definition.workflow.budget?.max_cost_usd;
    if (max === undefined) return undefined;
    return Math.max(0, max - (this.snapshot.costUsd - (this.snapshot.budgetBaseUsd ?? 0)));
  }

  /**
   * What an agent command may still spend: the run's budget room, or less when the active loop
   * iteration's `max_cost_per_iteration_usd` leaves less.
   */
  agentRoomUsd(): number | undefined {
    const run = this.budgetRoomUsd();
    const active = this.snapshot.active;
    const progress = active?.progress;
    if (active === undefined || progress?.kind !== "loop") return run;
    const node = this.definition.workflow.nodes[active.node];
    const perIteration =
      node?.kind === "loop" ? node.budget?.max_cost_per_iteration_usd : undefined;
    if (perIteration === undefined) return run;
    const iteration = Math.max(0, perIteration - (progress.costUsd ?? 0));
    return run === undefined ? iteration : Math.min(run, iteration);
  }

  /** Sends a command to a DevBox and returns its id. The brief always travels as a file. */
  dispatch(devboxId: string, command: DevBoxCommand, files: Record<string, string> = {}): string {
    const commandId = `c${this.snapshot.seq}`;
    // Every command, not only an agent's: a `run:` script can call a provider through the proxy.
    const room = this.agentRoomUsd();
    const proxied = this.snapshot.proxiedUsd ?? 0;
    this.emit({
      type: "command.dispatch",
      devboxId,
      request: {
        commandId,
        command,
        files: { brief: this.definition.brief, ...files },
        ...(room === undefined ? {} : { spendLimitUsd: room }),
        ...(room === undefined || proxied === 0 ? {} : { proxiedUsd: proxied }),
      },
    });
    const active = this.snapshot.active;
    this.record("command.dispatched", {
      ...(active === undefined ? {} : { node: active.node, attempt: this.visit.attempt }),
      devbox: devboxId,
      command: commandId,
      ...describeCommand(command),
      ...(command.type === "agent" ? harnessOf(this.heldDevBox(devboxId), command.argv[0]) : {}),
    });
    return commandId;
  }
}

/** What evidence shows of a command: never the prompt's untrusted parts in full. */
function describeCommand(command: DevBoxCommand): Record<string, unknown> {
  switch (command.type) {
    case "script":
      return { run: command.script };
    case "agent":
      return { agent: command.argv[0], model: command.model };
    case "checkpoint":
      return { checkpoint: command.message };
  }
}

/** The agent CLIs the run's nodes start, for the DevBox to report their versions. */
function harnessesOf(definition: RunDefinition): { harnesses?: string[] } {
  const engines = Object.values(definition.workflow.nodes).flatMap((node) =>
    node.kind === "prototype"
      ? node.variants.map((variant) => variant.engine)
      : "agent" in node && node.agent !== undefined
        ? [node.agent.engine]
        : [],
  );
  const binaries = engines.map((engine) => definition.engines[engine]?.command[0]);
  const harnesses = [...new Set(binaries)].filter((b): b is string => b !== undefined && b !== "");
  return harnesses.length === 0 ? {} : { harnesses };
}

/** The harness version of an agent command's CLI, as its DevBox reported it when ready. */
function harnessOf(
  devbox: HeldDevBox | undefined,
  binary: string | undefined,
): { harness?: string } {
  const version = binary === undefined ? undefined : devbox?.harness?.[binary];
  return version === undefined ? {} : { harness: version };
}
