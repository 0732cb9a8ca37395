import type { EvidenceEntry, RunDefinition, RunSnapshot, Visit } from "../../engine/model.js";
import { cell, truncateText } from "../client/limits.js";
import { plainText } from "./plain-text.js";

/** A check run as the app wants it to look; `externalId` finds it again. */
export interface CheckRunSpec {
  externalId: string;
  name: string;
  status: "queued" | "in_progress" | "completed";
  conclusion?: "success" | "failure" | "neutral" | "cancelled" | "action_required";
  title: string;
  summary: string;
  actions?: { label: string; description: string; identifier: "approve" | "reject" }[];
  /** The run page (or the visit's page) the check run links to, when run pages are served. */
  detailsUrl?: string;
}

/** The external id of a run's per-node check run: `<runId>/<visit index>`. */
export function nodeCheckId(runId: string, visit: number): string {
  return `${runId}/${visit}`;
}

/** Reads a check run's external id back into run id and visit index. */
export function parseCheckId(externalId: string): { runId: string; visit?: number } {
  const [runId = "", visit] = externalId.split("/");
  return visit === undefined ? { runId } : { runId, visit: Number(visit) };
}

const CONCLUSIONS = {
  succeeded: "success",
  failed: "failure",
  cancelled: "cancelled",
  escalated: "neutral",
} as const;

/**
 * The check runs a run should show: one for the run, and one per visit of a decision, loop,
 * prototype or approval node. With `runPage` (the run page's URL), each links to it: a loop's or
 * prototype's to its own page. A pure function of the run and its evidence.
 */
export function renderCheckRuns(
  definition: RunDefinition,
  state: RunSnapshot,
  evidence: readonly EvidenceEntry[],
  runPage?: string,
): CheckRunSpec[] {
  const specs: CheckRunSpec[] = [runCheck(definition, state)];
  state.visits.forEach((visit, index) => {
    const node = definition.workflow.nodes[visit.node];
    if (node === undefined || node.kind === "run") return;
    const name = `ClusterCode · ${node.title ?? visit.node}`;
    const mine = evidence.filter(
      (entry) =>
        entry.node === visit.node &&
        entry.at >= visit.startedAt &&
        (visit.endedAt === undefined || entry.at <= visit.endedAt),
    );
    const base = { externalId: nodeCheckId(state.runId, index), name };
    const done = visit.outcome !== undefined;
    const finished = (ok: boolean) =>
      done
        ? {
            status: "completed" as const,
            conclusion: ok ? ("success" as const) : ("failure" as const),
          }
        : { status: "in_progress" as const };
    if (node.kind === "approval") {
      specs.push({ ...base, ...approvalCheck(state, visit, index, mine) });
    } else if (node.kind === "decision") {
      specs.push({ ...base, ...finished(true), ...decisionOutput(visit, mine) });
    } else if (node.kind === "loop") {
      specs.push({
        ...base,
        ...finished(visit.outcome === "succeeded"),
        ...loopOutput(visit, mine),
      });
    } else {
      specs.push({
        ...base,
        ...finished(visit.outcome === "succeeded"),
        ...prototypeOutput(visit, mine),
      });
    }
  });
  return specs.map((spec) => ({
    ...spec,
    summary: truncateText(spec.summary),
    ...(runPage === undefined
      ? {}
      : { detailsUrl: detailsUrlOf(definition, state, spec, runPage) }),
  }));
}

/** Where a check run links: the run page, a loop's or prototype's own page, a visit's entry. */
function detailsUrlOf(
  definition: RunDefinition,
  state: RunSnapshot,
  spec: CheckRunSpec,
  runPage: string,
): string {
  const { visit } = parseCheckId(spec.externalId);
  if (visit === undefined) return runPage;
  const kind = definition.workflow.nodes[state.visits[visit]?.node ?? ""]?.kind;
  return kind === "loop" || kind === "prototype"
    ? `${runPage}/visits/${visit}`
    : `${runPage}#visit-${visit}`;
}

function runCheck(definition: RunDefinition, state: RunSnapshot): CheckRunSpec {
  const name = `ClusterCode · ${definition.workflow.name}`;
  const where = state.active === undefined ? "" : ` at ${state.active.node}`;
  const summary = `Run \`${state.runId}\` on \`${state.branch}\`: ${state.status}${where}.${state.reason === undefined ? "" : `\n\n${plainText(state.reason)}`}`;
  const base = { externalId: state.runId, name, title: `${state.status}${where}`, summary };
  if (state.status === "queued") return { ...base, status: "queued" };
  if (state.status === "running" || state.status === "awaiting_input")
    return { ...base, status: "in_progress" };
  return { ...base, status: "completed", conclusion: CONCLUSIONS[state.status] };
}

function approvalCheck(
  state: RunSnapshot,
  visit: Visit,
  index: number,
  evidence: readonly EvidenceEntry[],
): Omit<CheckRunSpec, "externalId" | "name"> {
  const answer = evidence.find((entry) => entry.kind === "approval.answered");
  if (visit.outcome !== undefined) {
    const who =
      answer === undefined
        ? (visit.reason ?? "no answer")
        : `${text(answer.decision)} by @${text(answer.actor)}${answer.note === undefined ? "" : `: ${plainText(text(answer.note))}`}${answer.where === undefined ? "" : `\n\n[where](${text(answer.where)})`}`;
    return {
      status: "completed",
      conclusion: visit.outcome === "approved" ? "success" : "failure",
      title: visit.outcome,
      summary: who,
    };
  }
  const waiting = state.awaiting?.kind === "approval" && state.active?.visit === index;
  return {
    status: "completed",
    conclusion: waiting ? "action_required" : "neutral",
    title: `Waiting for approval of ${visit.node}`,
    summary: "Approve or reject with the buttons, a PR review, or `/approve` / `/reject [reason]`.",
    actions: [
      { label: "Approve", description: "Approve and resume the run", identifier: "approve" },
      { label: "Reject", description: "Reject this approval", identifier: "reject" },
    ],
  };
}

function decisionOutput(visit: Visit, evidence: readonly EvidenceEntry[]) {
  const verdict = evidence.find((entry) => entry.kind === "decision.evaluated");
  if (verdict === undefined)
    return { title: "Deciding…", summary: "The decision is being evaluated." };
  const why =
    verdict.reasoning !== undefined
      ? `**Reasoning**\n\n${text(verdict.reasoning)}`
      : verdict.exitCode !== undefined
        ? `Exit code: \`${text(verdict.exitCode)}\``
        : verdict.error !== undefined
          ? `Error: ${text(verdict.error)}`
          : "";
  return {
    title: `Verdict: ${text(verdict.verdict ?? visit.outcome ?? "none")}`,
    summary: `Evaluator: \`${text(verdict.evaluator)}\`\n\n${why}`,
  };
}

function loopOutput(visit: Visit, evidence: readonly EvidenceEntry[]) {
  const rows = evidence
    .filter((entry) => entry.kind === "loop.iteration")
    .map((entry) => {
      const failed = Array.isArray(entry.failedGates)
        ? (entry.failedGates as unknown[]).map(String)
        : [];
      return `| ${text(entry.iteration)} | ${failed.length === 0 ? "all passed" : cell(failed.join(", "))} |`;
    });
  return {
    title: `${visit.outcome ?? "iterating"} after ${rows.length} iteration(s)`,
    summary: ["| iteration | failed gates |", "|---|---|", ...rows].join("\n"),
  };
}

function prototypeOutput(visit: Visit, evidence: readonly EvidenceEntry[]) {
  const table = evidence.find((entry) => entry.kind === "prototype.variants");
  const variants = Array.isArray(table?.variants)
    ? (table.variants as Record<string, unknown>[])
    : [];
  const rows = variants.map(
    (v) =>
      `| ${text(v.variant)} | ${cell(text(v.engine ?? ""))} | ${cell(text(v.model ?? ""))} | ${text(v.verdict)} | ${Math.round(Number(v.durationMs) / 1000)} s | $${Number(v.costUsd ?? 0).toFixed(2)} |`,
  );
  return {
    title: visit.outcome ?? "racing",
    summary: [
      "| variant | engine | model | result | time | cost |",
      "|---|---|---|---|---|---|",
      ...rows,
    ].join("\n"),
  };
}

/** An evidence field as text: scalars as they are, anything else as JSON. */
function text(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return `${value}`;
  return value === undefined ? "" : JSON.stringify(value);
}
