import { isFinal, type RunSnapshot } from "../engine/model.js";
import type { LoadedRun } from "../store/run-repository.js";
import type { EvidenceRecord } from "../store/store.js";
import { DEFAULT_MAX_TRAVERSALS, isTerminal } from "../workflow/graph.js";
import type { Workflow } from "../workflow/workflow.schema.js";
import { entryOf, evidenceLine, numberOf, textOf } from "./evidence-lines.js";
import { buildLoopView } from "./loop-view.js";
import { buildPrototypeView } from "./prototype-view.js";
import type {
  ApprovalView,
  BudgetView,
  GraphView,
  RunSummaryView,
  RunView,
  VisitView,
} from "./view/run-view.js";

/** Where a run's branch, pull request and commit can be seen, when the host knows. */
export interface RunLinks {
  branch?: string;
  pullRequest?: string;
  commit?: string;
}

/**
 * The run page's view of a stored run and its evidence: the graph with the token's position,
 * every visit with its evidence (split by the `node.entered` entry that opens each visit), loop
 * iterations, prototype variants, spend against each budget, and the approval waited on. A pure
 * function: it shows what the store records and nothing it does not.
 */
export function buildRunView(
  run: LoadedRun,
  records: readonly EvidenceRecord[],
  links: RunLinks = {},
): RunView {
  const { stored, document } = run;
  const { definition, state } = document;
  const { workflow } = definition;
  const ordered = [...records].sort((a, b) => a.seq - b.seq);
  const segments = splitByVisit(ordered);
  const visits = state.visits.map((visit, index) =>
    visitOf(workflow, state, index, segments.visits[index] ?? []),
  );
  const approval = approvalOf(workflow, state);
  return {
    runId: stored.runId,
    repo: stored.repo,
    workflow: workflow.name,
    status: state.status,
    final: isFinal(state.status),
    startedAt: state.startedAt,
    updatedAt: state.updatedAt,
    brief: firstLine(definition.brief),
    branch: state.branch,
    baseBranch: definition.baseBranch,
    links,
    graph: graphOf(workflow, state),
    visits,
    budgets: budgetsOf(workflow, state, ordered),
    runEvidence: segments.before.map(evidenceLine),
    ...optional({
      reason: state.reason,
      startedBy: definition.startedBy,
      lastSha: state.lastSha,
      activeNode: state.active?.node,
    }),
    ...(approval === undefined ? {} : { approval }),
  };
}

/** One visit: its outcome, verdict or answer, commit, evidence, and a loop's or prototype's view. */
function visitOf(
  workflow: Workflow,
  state: RunSnapshot,
  index: number,
  mine: readonly EvidenceRecord[],
): VisitView {
  const visit = state.visits[index];
  if (visit === undefined) throw new Error("programmer error: no such visit");
  const node = workflow.nodes[visit.node];
  const view: VisitView = {
    index,
    node: visit.node,
    title: node?.title ?? visit.node,
    kind: node?.kind ?? "unknown",
    attempt: visit.attempt,
    startedAt: visit.startedAt,
    costUsd: visit.costUsd,
    evidence: mine.map(evidenceLine),
    ...optional({ endedAt: visit.endedAt, outcome: visit.outcome, label: visit.label }),
    ...optional({ reason: visit.reason }),
    ...(visit.fedBack === undefined ? {} : { fedBack: visit.fedBack }),
  };
  const judged = (sha: string | undefined) =>
    sha === undefined
      ? {}
      : {
          headSha: sha,
          ...(state.lastSha !== undefined && state.lastSha !== sha ? { stale: true } : {}),
        };
  for (const record of mine) {
    const entry = entryOf(record);
    if (entry.kind === "checkpoint" && typeof entry.sha === "string") view.commit = entry.sha;
    if (entry.kind === "decision.evaluated" && node?.kind === "decision") {
      view.decision = {
        evaluator: textOf(entry.evaluator) ?? "",
        ...optional({
          verdict: textOf(entry.verdict),
          reasoning: textOf(entry.reasoning),
          exitCode: numberOf(entry.exitCode),
          error: textOf(entry.error),
          model: textOf(entry.model),
        }),
        ...judged(textOf(entry.headSha)),
      };
    }
    if (entry.kind === "approval.answered") {
      view.answer = {
        decision: textOf(entry.decision) ?? "",
        actor: textOf(entry.actor) ?? "",
        at: entry.at,
        ...optional({ note: textOf(entry.note), where: textOf(entry.where) }),
        ...judged(textOf(entry.headSha)),
      };
    }
  }
  if (node?.kind === "loop") view.loop = buildLoopView(node, mine);
  if (node?.kind === "prototype") {
    const progress = state.active?.visit === index ? state.active.progress : undefined;
    const live = progress?.kind === "prototype" ? progress.variants : undefined;
    view.prototype = buildPrototypeView(node, mine, live);
  }
  return view;
}

/** A stored run as a line of an index; `page` is the run page's path. */
export function summarizeRun(run: LoadedRun, page: string): RunSummaryView {
  const { stored, document } = run;
  const { state } = document;
  return {
    runId: stored.runId,
    repo: stored.repo,
    workflow: stored.workflow,
    status: state.status,
    branch: state.branch,
    costUsd: state.costUsd,
    createdAt: stored.createdAt,
    updatedAt: stored.updatedAt,
    page,
    ...optional({ activeNode: state.active?.node }),
  };
}

function splitByVisit(records: readonly EvidenceRecord[]) {
  const before: EvidenceRecord[] = [];
  const visits: EvidenceRecord[][] = [];
  for (const record of records) {
    if (entryOf(record).kind === "node.entered") visits.push([]);
    (visits.at(-1) ?? before).push(record);
  }
  return { before, visits };
}

function graphOf(workflow: Workflow, state: RunSnapshot): GraphView {
  const counts: Record<string, number> = {};
  for (const visit of state.visits) counts[visit.node] = (counts[visit.node] ?? 0) + 1;
  const active = state.active?.node;
  const nodes = Object.entries(workflow.nodes).map(([id, node]) => ({
    id,
    title: node.title ?? id,
    kind: node.kind,
    visits: counts[id] ?? 0,
    state:
      id === active
        ? ("active" as const)
        : (counts[id] ?? 0) > 0
          ? ("visited" as const)
          : ("pending" as const),
  }));
  const edges = workflow.edges.map((edge, index) => ({
    from: edge.from,
    to: edge.to,
    back: edge.back === true,
    traversals: state.traversals[String(index)] ?? 0,
    ...optional({
      label: edge.label,
      maxTraversals:
        edge.back === true ? (edge.max_traversals ?? DEFAULT_MAX_TRAVERSALS) : undefined,
    }),
  }));
  const reached =
    state.status === "succeeded" ? "done" : isFinal(state.status) ? state.status : undefined;
  const terminals = [...new Set(workflow.edges.map((edge) => edge.to).filter(isTerminal))];
  if (reached !== undefined && isTerminal(reached) && !terminals.includes(reached))
    terminals.push(reached);
  return { nodes, edges, terminals: terminals.map((id) => ({ id, reached: id === reached })) };
}

function budgetsOf(
  workflow: Workflow,
  state: RunSnapshot,
  records: readonly EvidenceRecord[],
): BudgetView[] {
  const budgets: BudgetView[] = [
    {
      name: "run",
      spentUsd: state.costUsd,
      ...optional({ limitUsd: workflow.budget?.max_cost_usd }),
    },
  ];
  for (const [id, node] of Object.entries(workflow.nodes)) {
    if (node.kind !== "loop") continue;
    const entries = records.map(entryOf).filter((entry) => entry.node === id);
    const iterations = entries.filter((entry) => entry.kind === "loop.iteration");
    const last = iterations.at(-1);
    if (last !== undefined || node.budget?.max_cost_per_iteration_usd !== undefined) {
      budgets.push({
        name: `iteration of ${id}${last === undefined ? "" : ` (latest: ${textOf(last.iteration) ?? "?"})`}`,
        spentUsd: numberOf(last?.costUsd) ?? 0,
        ...optional({ limitUsd: node.budget?.max_cost_per_iteration_usd }),
      });
    }
    const ledger = entries.filter((entry) => entry.kind === "ledger.checked").at(-1);
    if (ledger !== undefined || node.budget?.max_daily_cost_usd !== undefined) {
      budgets.push({
        name: `daily cost of ${workflow.name}/${id} (UTC day, at the last check)`,
        spentUsd: numberOf(ledger?.spentTodayUsd) ?? 0,
        ...optional({ limitUsd: node.budget?.max_daily_cost_usd }),
      });
    }
  }
  return budgets;
}

function approvalOf(workflow: Workflow, state: RunSnapshot): ApprovalView | undefined {
  const awaiting = state.awaiting;
  if (awaiting?.kind !== "approval" || state.active === undefined) return undefined;
  const node = workflow.nodes[awaiting.node];
  const approval = node?.kind === "approval" ? node : undefined;
  return {
    node: awaiting.node,
    title: node?.title ?? awaiting.node,
    visit: state.active.visit,
    deadline: awaiting.deadline,
    approvers: [...(approval?.approvers ?? workflow.approvers ?? [])],
    preventSelfApproval: approval?.prevent_self_approval === true,
    ...optional({ message: approval?.message }),
  };
}

function firstLine(text: string): string {
  return (
    text
      .split("\n")
      .find((line) => line.trim() !== "")
      ?.trim() ?? ""
  );
}

/** The fields of `fields` that are defined (for exactOptionalPropertyTypes). */
function optional<T extends Record<string, unknown>>(
  fields: T,
): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}
