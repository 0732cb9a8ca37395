import { readFileSync } from "node:fs";
import type { CommandRequest } from "../../src/engine/commands.js";
import type { Effect, RunDefinition, RunEvent, RunSnapshot } from "../../src/engine/model.js";
import { createSnapshot, step } from "../../src/engine/step.js";
import { parseWorkflow } from "../../src/workflow/parse.js";
import type { Workflow } from "../../src/workflow/workflow.schema.js";

/** A workflow from YAML text, failing the test on any finding. */
export function workflowOf(yaml: string): Workflow {
  const result = parseWorkflow(yaml);
  if (!result.ok) throw new Error(JSON.stringify(result.findings, null, 2));
  return result.workflow;
}

/** A workflow from a file under the repository. */
export function workflowFile(path: string): Workflow {
  return workflowOf(readFileSync(new URL(`../../${path}`, import.meta.url), "utf8"));
}

/** A run definition with a fake agent engine for every engine name. */
export function definitionOf(
  workflow: Workflow,
  overrides: Partial<RunDefinition> = {},
): RunDefinition {
  const engines: RunDefinition["engines"] = {
    claude: { command: ["fake-claude", "{prompt_file}"] },
    codex: { command: ["fake-codex", "{prompt_file}"] },
  };
  return {
    runId: "r1",
    workflow,
    baseBranch: "main",
    branch: "clustercode/1-r1",
    brief: "Fix the bug",
    startedBy: "alice",
    engines,
    ...overrides,
  };
}

/** How the simulated world answers. */
export interface World {
  /** Exit code of a command (default 0). */
  exit?: (request: CommandRequest, devboxId: string) => number;
  /** The judge's label (default: the first allowed label). */
  judge?: (labels: string[]) => string;
  /** Stop processing (leave the run where it is) when this returns true for an effect. */
  pause?: (effect: Effect) => boolean;
  /** Cost reported by agent commands (a function to vary it per command). */
  cost?: number | ((request: CommandRequest) => number | undefined);
  /** The daily ledger `ledger.add` effects go to (shared by runs that share it); default: private. */
  ledger?: Map<string, number>;
}

/** A run driven by a simulated runtime, recording every event, effect and snapshot. */
export class SimulatedRun {
  snapshot: RunSnapshot;
  readonly events: RunEvent[] = [];
  readonly effects: Effect[] = [];
  readonly refusals: string[] = [];
  readonly queue: RunEvent[] = [];
  clock = 1_000_000;
  readonly ledger: Map<string, number>;

  constructor(
    readonly definition: RunDefinition,
    readonly world: World = {},
  ) {
    this.snapshot = createSnapshot(definition, this.clock);
    this.ledger = world.ledger ?? new Map<string, number>();
  }

  /** Applies one event and queues the world's answers to the effects it produced. */
  send(event: RunEvent): Effect[] {
    this.events.push(event);
    const result = step(this.definition, this.snapshot, event);
    if (result.refused !== undefined) this.refusals.push(result.refused);
    this.snapshot = result.snapshot;
    this.effects.push(...result.effects);
    for (const effect of result.effects) this.answer(effect);
    return result.effects;
  }

  /** Runs queued events until none is left (bounded). */
  drain(limit = 2_000): this {
    for (let i = 0; i < limit && this.queue.length > 0; i++)
      this.send(this.queue.shift() as RunEvent);
    if (this.queue.length > 0) throw new Error("run did not settle");
    return this;
  }

  start(): this {
    this.send({ type: "run.start", at: this.tick() });
    return this.drain();
  }

  tick(ms = 1_000): number {
    this.clock += ms;
    return this.clock;
  }

  private answer(effect: Effect): void {
    if (this.world.pause?.(effect) === true) return;
    const at = this.clock + 1;
    if (effect.type === "devbox.claim") {
      // The checkout's head: the commit it was asked for, else the base branch's.
      const sha = effect.spec.sha ?? `head-of-${effect.spec.baseBranch}`;
      this.queue.push({ type: "devbox.ready", devboxId: effect.devboxId, ok: true, sha, at });
    } else if (effect.type === "command.dispatch") {
      const { request } = effect;
      const exitCode = this.world.exit?.(request, effect.devboxId) ?? 0;
      this.queue.push({
        type: "command.finished",
        devboxId: effect.devboxId,
        at,
        result: {
          commandId: request.commandId,
          exitCode,
          output: `output of ${request.commandId}`,
          durationMs: 10,
          ...(request.command.type === "checkpoint" ? { sha: `sha-${request.commandId}` } : {}),
          ...this.costOf(request),
        },
      });
    } else if (effect.type === "ledger.add") {
      const key = `${effect.workflow}@${effect.day}`;
      const total = (this.ledger.get(key) ?? 0) + effect.usd;
      this.ledger.set(key, total);
      if (effect.requestId !== undefined) {
        this.queue.push({ type: "ledger.total", requestId: effect.requestId, totalUsd: total, at });
      }
    } else if (effect.type === "judge.request") {
      const label = this.world.judge?.(effect.labels) ?? effect.labels[0] ?? "none";
      this.queue.push({
        type: "judge.verdict",
        requestId: effect.requestId,
        label,
        reasoning: "because",
        at,
      });
    }
  }

  private costOf(request: CommandRequest): { costUsd?: number } {
    const cost = this.world.cost;
    if (request.command.type !== "agent" || cost === undefined) return {};
    const usd = typeof cost === "function" ? cost(request) : cost;
    return usd === undefined ? {} : { costUsd: usd };
  }

  /** The node and outcome of every visit. */
  get path(): string[] {
    return this.snapshot.visits.map((visit) => `${visit.node}:${visit.outcome ?? "…"}`);
  }

  /** Scripts sent to DevBoxes, in order. */
  get scripts(): string[] {
    return this.effects.flatMap((effect) =>
      effect.type === "command.dispatch" && effect.request.command.type === "script"
        ? [effect.request.command.script]
        : [],
    );
  }
}
