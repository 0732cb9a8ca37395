import type { EvidenceEntry, RunDocument, Visit } from "../engine/model.js";
import type { WorkflowNode } from "../workflow/workflow.schema.js";

/** Attribute values as OpenTelemetry takes them. */
export type Attributes = Record<string, string | number | boolean | string[]>;

/**
 * A finished span of a run, derived from one evidence entry and the run's document. Its key is
 * unique in the run and stable across processes: span ids derive from it, so a run picked up
 * by another process after a crash goes on in the same trace under the same parents.
 */
export interface RunSpan {
  key: string;
  /** The parent's key; the run span has none. */
  parent?: string;
  name: string;
  start: number;
  end: number;
  attributes: Attributes;
  /** The delivery that started the run, for the run span's link to the webhook's trace. */
  delivery?: string;
}

/** Facts every span of a run carries. */
function runAttributes(run: RunDocument, repo: string): Attributes {
  const { definition } = run;
  return {
    "clustercode.run.id": definition.runId,
    "clustercode.repository": repo,
    "clustercode.workflow": definition.workflow.name,
    ...(definition.source === undefined
      ? {}
      : {
          "clustercode.workflow.path": definition.source.path,
          "clustercode.graph.version": definition.source.sha,
        }),
  };
}

const nodeKey = (node: string, attempt: number) => `node/${node}/${attempt}`;

/** The visit an entry belongs to: the latest of its node with its attempt (or the latest). */
function visitOf(run: RunDocument, node: string, attempt?: number): Visit | undefined {
  const visits = run.state.visits.filter(
    (v) => v.node === node && (attempt === undefined || v.attempt === attempt),
  );
  return visits.at(-1);
}

function number(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

function tokens(usage: unknown): Attributes {
  if (typeof usage !== "object" || usage === null) return {};
  const { inputTokens, outputTokens } = usage as Record<string, unknown>;
  return {
    ...(number(inputTokens) === undefined
      ? {}
      : { "clustercode.tokens.input": inputTokens as number }),
    ...(number(outputTokens) === undefined
      ? {}
      : { "clustercode.tokens.output": outputTokens as number }),
  };
}

/**
 * What the caller saw of a node visit in earlier evidence: when its current loop iteration began
 * and the harness version its agent commands were dispatched with.
 */
export interface SeenBefore {
  iterationStart?: number;
  harness?: string;
}

/** The engine and model a node's agent runs with, and its CLI's reported version. */
function agentAttributes(
  run: RunDocument,
  node: WorkflowNode | undefined,
  seen: SeenBefore,
): Attributes {
  const agent = node !== undefined && "agent" in node ? node.agent : undefined;
  if (agent === undefined) return {};
  const binary = run.definition.engines[agent.engine]?.command[0];
  const harness =
    seen.harness ?? (binary === undefined ? undefined : run.state.devbox?.harness?.[binary]);
  return {
    "clustercode.engine": agent.engine,
    ...(agent.model === undefined ? {} : { "clustercode.model": agent.model }),
    ...(harness === undefined ? {} : { "clustercode.harness.version": harness }),
  };
}

/**
 * The spans an evidence entry closes: a command, a loop iteration, a judge call, an approval
 * wait, a node visit, or the run itself.
 */
export function spansOf(
  run: RunDocument,
  repo: string,
  entry: EvidenceEntry,
  seen: SeenBefore = {},
): RunSpan[] {
  const common = runAttributes(run, repo);
  const nodeId = typeof entry.node === "string" ? entry.node : undefined;
  const node = nodeId === undefined ? undefined : run.definition.workflow.nodes[nodeId];
  const visit = nodeId === undefined ? undefined : visitOf(run, nodeId, entry.attempt);
  const nodeAttributes: Attributes =
    nodeId === undefined || visit === undefined
      ? common
      : {
          ...common,
          "clustercode.node.id": nodeId,
          "clustercode.node.kind": node?.kind ?? "unknown",
          "clustercode.node.attempt": visit.attempt,
        };
  const parent = visit === undefined ? "run" : nodeKey(visit.node, visit.attempt);
  const child = (name: string, key: string, start: number, extra: Attributes): RunSpan => ({
    key,
    parent,
    name,
    start,
    end: entry.at,
    attributes: { ...nodeAttributes, ...extra },
  });
  const cost = number(entry.costUsd);
  const costAttribute: Attributes = cost === undefined ? {} : { "clustercode.cost.usd": cost };
  switch (entry.kind) {
    case "command.finished":
      return [
        child(
          "clustercode.command",
          `${parent}/command/${String(entry.command)}`,
          entry.at - (number(entry.durationMs) ?? 0),
          {
            "clustercode.command.id": String(entry.command),
            "clustercode.command.exit_code": number(entry.exitCode) ?? -1,
            ...(typeof entry.engine === "string" ? { "clustercode.engine": entry.engine } : {}),
            ...(typeof entry.model === "string" ? { "clustercode.model": entry.model } : {}),
            ...costAttribute,
            ...tokens(entry.usage),
          },
        ),
      ];
    case "loop.iteration":
      return [
        child(
          "clustercode.loop.iteration",
          `${parent}/iteration/${String(entry.iteration)}`,
          seen.iterationStart ?? visit?.startedAt ?? entry.at,
          {
            "clustercode.loop.iteration": number(entry.iteration) ?? 0,
            "clustercode.loop.failed_gates": Array.isArray(entry.failedGates)
              ? entry.failedGates.map(String)
              : [],
            ...costAttribute,
          },
        ),
      ];
    case "decision.evaluated":
      if (entry.evaluator !== "agent") return [];
      return [judgeSpan(child, parent, visit, entry, node, costAttribute)];
    case "approval.answered":
    case "approval.timed_out":
      return [
        child("clustercode.approval.wait", `${parent}/approval`, visit?.startedAt ?? entry.at, {
          "clustercode.outcome":
            entry.kind === "approval.answered" ? String(entry.decision) : "timed_out",
          ...(typeof entry.actor === "string" ? { "clustercode.approval.actor": entry.actor } : {}),
        }),
      ];
    case "node.finished":
      if (visit === undefined) return [];
      return [
        {
          key: parent,
          parent: "run",
          name: "clustercode.node",
          start: visit.startedAt,
          end: entry.at,
          attributes: {
            ...nodeAttributes,
            ...agentAttributes(run, node, seen),
            "clustercode.outcome": String(entry.outcome),
            "clustercode.cost.usd": visit.costUsd,
          },
        },
      ];
    case "run.finished":
      return [runSpan(run, common, entry)];
    default:
      return [];
  }
}

function judgeSpan(
  child: (name: string, key: string, start: number, extra: Attributes) => RunSpan,
  parent: string,
  visit: Visit | undefined,
  entry: EvidenceEntry,
  node: WorkflowNode | undefined,
  costAttribute: Attributes,
): RunSpan {
  const judge = node !== undefined && "judge" in node ? node.judge : undefined;
  return child("clustercode.judge", `${parent}/judge`, visit?.startedAt ?? entry.at, {
    ...(judge === undefined ? {} : { "clustercode.judge.provider": judge.provider }),
    ...(typeof entry.model === "string"
      ? { "clustercode.model": entry.model }
      : judge === undefined
        ? {}
        : { "clustercode.model": judge.model }),
    "clustercode.outcome": typeof entry.verdict === "string" ? entry.verdict : "failed",
    ...costAttribute,
    ...tokens(entry.usage),
  });
}

function runSpan(run: RunDocument, common: Attributes, entry: EvidenceEntry): RunSpan {
  const { state, definition } = run;
  return {
    key: "run",
    name: "clustercode.run",
    start: state.startedAt,
    end: entry.at,
    attributes: {
      ...common,
      "clustercode.outcome": String(entry.status),
      "clustercode.cost.usd": state.costUsd,
      ...(definition.startedBy === undefined
        ? {}
        : { "clustercode.started_by": definition.startedBy }),
    },
    ...(definition.trigger === undefined ? {} : { delivery: definition.trigger }),
  };
}
