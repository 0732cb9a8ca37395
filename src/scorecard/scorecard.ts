import type { EvidenceEntry, RunDefinition } from "../engine/model.js";

/** One judge's verdict, and whether what followed contradicted it. */
export interface Verdict {
  runId: string;
  node: string;
  at: number;
  provider: string;
  model: string;
  label: string;
  /** Whether the judge was independent of the work's author (another provider or model). */
  independent: boolean;
  /** What contradicted the verdict, when something did. */
  overturned?: { why: string; at: number };
}

/** One provider/model's record. */
export interface ScorecardRow {
  provider: string;
  model: string;
  verdicts: number;
  overturned: number;
  /** overturned / verdicts. */
  overturnRate: number;
  /** The share of verdicts given independently of the work's author. */
  independentShare: number;
}

/** Terminal nodes a verdict can route to that are not a "go". */
const STOPS = new Set(["failed", "escalated"]);

/**
 * Whether a verdict let the work go on: its edge moves forward (not a back edge to rework, not to
 * `failed` or `escalated`). A prototype judge's pick always does.
 */
function saidGo(definition: RunDefinition, node: string, label: string): boolean {
  if (definition.workflow.nodes[node]?.kind === "prototype") return true;
  const edge = definition.workflow.edges.find((e) => e.from === node && e.label === label);
  return edge !== undefined && edge.back !== true && !STOPS.has(edge.to);
}

/** Did this evidence entry show a gate failing? */
function gateFailed(entry: EvidenceEntry): boolean {
  if (entry.kind === "loop.iteration") {
    return Array.isArray(entry.failedGates) && entry.failedGates.length > 0;
  }
  return (
    entry.kind === "decision.evaluated" &&
    entry.evaluator === "deterministic" &&
    entry.verdict === "fail"
  );
}

/**
 * What contradicted a verdict among the entries after it (up to the same node's next verdict): a
 * person rejecting at the next approval after the judge said go, a gate or CI failing on the
 * commit it judged (before any new commit), the run sent back for rework after it succeeded
 * (a review, CI, a conflict, `/rework`), its pull request closed unmerged, or a person retrying
 * past a judge that stopped the work.
 */
function contradiction(
  node: string,
  go: boolean,
  judgedSha: string | undefined,
  after: readonly EvidenceEntry[],
): Verdict["overturned"] {
  let sha = judgedSha;
  let approvalSeen = false;
  for (const entry of after) {
    if (typeof entry.sha === "string" && entry.sha !== judgedSha) sha = entry.sha;
    const why = contradictionIn(entry, node, go, sha === judgedSha, approvalSeen);
    if (why !== undefined) return { why, at: entry.at };
    if (entry.kind === "approval.answered") approvalSeen = true;
  }
  return undefined;
}

function contradictionIn(
  entry: EvidenceEntry,
  node: string,
  go: boolean,
  sameCommit: boolean,
  approvalSeen: boolean,
): string | undefined {
  const actor = typeof entry.actor === "string" ? entry.actor : "someone";
  if (go && !approvalSeen && entry.kind === "approval.answered" && entry.decision === "rejected") {
    return `rejected at ${String(entry.node)} by ${actor}`;
  }
  if (go && sameCommit && gateFailed(entry)) {
    return `a gate failed on the judged commit (${String(entry.node)})`;
  }
  if (go && sameCommit && entry.kind === "ci.failed") {
    return `${typeof entry.check === "string" ? entry.check : "CI"} failed on the judged commit`;
  }
  // The work it passed was sent back after the run succeeded: by a review, CI, a conflict with
  // the base, or a person's `/rework`.
  if (go && entry.kind === "rework.started") {
    const source = typeof entry.source === "string" ? entry.source : "someone";
    const by = typeof entry.actor === "string" ? ` by ${entry.actor}` : "";
    return `sent back for rework (${source}${by})`;
  }
  if (go && entry.kind === "pull_request.closed" && entry.merged !== true) {
    return "the pull request was closed unmerged";
  }
  // A retry overturns a judge that stopped the work, or re-runs the very node it judged.
  if (entry.kind === "run.retried" && (!go || entry.node === node)) {
    return `retried past it by ${actor}`;
  }
  return undefined;
}

/** The judges' verdicts of one run (agent decisions and prototype picks), each with its fate. */
export function verdictsOf(
  definition: RunDefinition,
  evidence: readonly EvidenceEntry[],
): Verdict[] {
  const verdicts: Verdict[] = [];
  let sha: string | undefined;
  evidence.forEach((entry, index) => {
    if (typeof entry.sha === "string") sha = entry.sha;
    if (entry.kind !== "decision.evaluated" || entry.evaluator !== "agent") return;
    if (typeof entry.verdict !== "string" || typeof entry.provider !== "string") return;
    const node = String(entry.node);
    const rest = evidence.slice(index + 1);
    const next = rest.findIndex(
      (later) =>
        later.kind === "decision.evaluated" && later.evaluator === "agent" && later.node === node,
    );
    const overturned = contradiction(
      node,
      saidGo(definition, node, entry.verdict),
      sha,
      next === -1 ? rest : rest.slice(0, next),
    );
    verdicts.push({
      runId: definition.runId,
      node,
      at: entry.at,
      provider: entry.provider,
      model: [entry.judgeModel, entry.model].find((m) => typeof m === "string") ?? "unknown",
      label: entry.verdict,
      independent: entry.independent === true,
      ...(overturned === undefined ? {} : { overturned }),
    });
  });
  return verdicts;
}

/** Verdicts counted per provider and model, the most used first. */
export function scorecard(verdicts: readonly Verdict[]): ScorecardRow[] {
  const rows = new Map<string, ScorecardRow>();
  for (const verdict of verdicts) {
    const key = `${verdict.provider}\u0000${verdict.model}`;
    const row = rows.get(key) ?? {
      provider: verdict.provider,
      model: verdict.model,
      verdicts: 0,
      overturned: 0,
      overturnRate: 0,
      independentShare: 0,
    };
    row.verdicts += 1;
    if (verdict.overturned !== undefined) row.overturned += 1;
    row.independentShare += verdict.independent ? 1 : 0;
    rows.set(key, row);
  }
  return [...rows.values()]
    .map((row) => ({
      ...row,
      overturnRate: row.overturned / row.verdicts,
      independentShare: row.independentShare / row.verdicts,
    }))
    .sort((a, b) => b.verdicts - a.verdicts || a.provider.localeCompare(b.provider));
}

/** A share as the scorecard shows it: `17 %`. */
export function formatShare(share: number): string {
  return `${(share * 100).toFixed(0)} %`;
}
