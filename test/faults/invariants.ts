import { utcDay } from "../../src/engine/utc-day.js";
import type { RunDocument } from "../../src/runtime/runtime.js";
import { RunRepository } from "../../src/store/run-repository.js";
import type { Store } from "../../src/store/store.js";
import { DEFAULT_MAX_TRAVERSALS } from "../../src/workflow/graph.js";
import type { FakeGitHub, RecordedRequest } from "../github/helpers/fake-github.js";
import type { PushedCommit } from "./pushes.js";

/** Statuses a run may end a scenario in: finished, or parked at an approval. */
const SETTLED = new Set(["succeeded", "failed", "cancelled", "escalated", "awaiting_input"]);

/** What a scenario hands the checker. */
export interface InvariantInput {
  store: Store;
  /** The runs to check (every run the scenario started). */
  runIds: string[];
  /** The fake GitHub the app talked to, when it did. */
  github?: FakeGitHub;
  /**
   * Daily ledger scopes (`owner/repo#workflow`) every spending run of the scenario adds to:
   * their totals must be exactly what the runs say they spent.
   */
  ledgerScopes?: string[];
  /** A run may still be going (the scenario stopped it on purpose): skip the settled check. */
  allowUnsettled?: boolean;
  /** The commits pushes brought to the runs' remote (see `recordPushes`). */
  pushes?: PushedCommit[];
  /** The ECS tasks started for the runs' DevBoxes (each tagged `startedBy` with its DevBox). */
  ecsTasks?: { startedBy: string }[];
}

/**
 * The invariants every fault scenario must leave holding; returns each violation as a line,
 * so that a test asserts the list is empty and a failure says what broke.
 *
 * - no effect twice: one comment per marker, one check run per external id and commit, one
 *   pull request per branch, one review request per pull request and reviewers, one tracking
 *   issue per title (counting the writes GitHub did, failed answers included); no more
 *   checkpoint commits of a node pushed to a run branch than the run visited the node; one ECS
 *   task per DevBox;
 * - every run settled: terminal, or awaiting an answer;
 * - caps held: back-edge traversals and loop iterations within their caps;
 * - spend counted once: each ledger's total is the sum of its runs' spend;
 * - the evidence log has no gap: sequence numbers 1..n, where n + 1 is the run's next one.
 */
export async function checkInvariants(input: InvariantInput): Promise<string[]> {
  const problems: string[] = [];
  const documents: RunDocument[] = [];
  for (const runId of input.runIds) {
    const run = await new RunRepository(input.store).get(runId);
    if (run === undefined) {
      problems.push(`run ${runId} is not in the store`);
      continue;
    }
    const { document } = run;
    documents.push(document);
    problems.push(...runProblems(document, input.allowUnsettled === true));
    if (input.pushes !== undefined) problems.push(...pushProblems(document, input.pushes));
    problems.push(...(await evidenceProblems(input.store, document)));
  }
  if (input.ledgerScopes !== undefined) {
    problems.push(...(await ledgerProblems(input.store, input.ledgerScopes, documents)));
  }
  if (input.github !== undefined) problems.push(...githubProblems(input.github));
  if (input.ecsTasks !== undefined) problems.push(...ecsProblems(input.ecsTasks));
  return problems;
}

/**
 * Each visit of a container node ends in one checkpoint (`clustercode: <node> (<outcome>)`, or
 * `clustercode: checkpoint <node> (<stop>)`): more commits of a node on the run branch than
 * visits means a checkpoint, or the work before it, was done again and pushed twice.
 */
function pushProblems(document: RunDocument, pushes: PushedCommit[]): string[] {
  const { state, definition } = document;
  const commits = new Map<string, number>();
  for (const { branch, subject } of pushes) {
    if (branch !== definition.branch) continue;
    const node = /^clustercode: (?:checkpoint )?(\S+) \(/.exec(subject)?.[1];
    if (node !== undefined) commits.set(node, (commits.get(node) ?? 0) + 1);
  }
  const problems: string[] = [];
  for (const [node, count] of commits) {
    const visits = state.visits.filter((visit) => visit.node === node).length;
    if (count > visits) {
      problems.push(
        `run ${state.runId} pushed ${count} checkpoints of ${node} to ${definition.branch} for ${visits} visits`,
      );
    }
  }
  return problems;
}

/** A DevBox is one task: RunTask again for it must give the same task (its client token). */
function ecsProblems(tasks: { startedBy: string }[]): string[] {
  const started = new Map<string, number>();
  for (const { startedBy } of tasks) started.set(startedBy, (started.get(startedBy) ?? 0) + 1);
  return [...started]
    .filter(([, count]) => count > 1)
    .map(([startedBy, count]) => `ECS task ${startedBy} started ${count} times`);
}

function runProblems(document: RunDocument, allowUnsettled: boolean): string[] {
  const { state, definition } = document;
  const problems: string[] = [];
  if (!allowUnsettled && !SETTLED.has(state.status)) {
    problems.push(`run ${state.runId} is stuck ${state.status}`);
  }
  definition.workflow.edges.forEach((edge, index) => {
    if (edge.back !== true) return;
    const cap = edge.max_traversals ?? DEFAULT_MAX_TRAVERSALS;
    const crossed = state.traversals[index] ?? 0;
    if (crossed > cap) {
      problems.push(
        `run ${state.runId} crossed ${edge.from}→${edge.to} ${crossed} times (cap ${cap})`,
      );
    }
  });
  for (const visit of state.visits) {
    const node = definition.workflow.nodes[visit.node] as
      { budget?: { max_iterations?: number } } | undefined;
    const cap = node?.budget?.max_iterations;
    if (cap !== undefined && (visit.iterations ?? 0) > cap) {
      problems.push(
        `run ${state.runId} looped ${visit.iterations} times in ${visit.node} (cap ${cap})`,
      );
    }
  }
  return problems;
}

async function evidenceProblems(store: Store, document: RunDocument): Promise<string[]> {
  const { runId, evidenceSeq } = document.state;
  const seqs = (await store.listEvidence(runId)).map((record) => record.seq).sort((a, b) => a - b);
  const expected = Array.from({ length: evidenceSeq - 1 }, (_, i) => i + 1);
  if (seqs.join(",") === expected.join(",")) return [];
  const missing = expected.filter((seq) => !seqs.includes(seq));
  const extra = seqs.filter((seq) => seq < 1 || seq >= evidenceSeq);
  return [
    `run ${runId} evidence has gaps: missing [${missing.join(",")}], beyond the run's [${extra.join(",")}]`,
  ];
}

async function ledgerProblems(
  store: Store,
  scopes: string[],
  documents: RunDocument[],
): Promise<string[]> {
  const days = new Set<string>();
  for (const { state } of documents) {
    days.add(utcDay(state.startedAt));
    days.add(utcDay(state.updatedAt));
  }
  let total = 0;
  for (const scope of scopes) {
    for (const day of days) total += await store.getCost(scope, day);
  }
  const spent = documents.reduce((sum, { state }) => sum + state.costUsd, 0);
  // Costs are cents-exact decimals in the ledger; the runs' sum is floating point.
  return Math.abs(total - spent) < 1e-6
    ? []
    : [`the ledgers say $${total} was spent, the runs $${spent}: spend was counted twice or lost`];
}

function githubProblems(github: FakeGitHub): string[] {
  const problems: string[] = [];
  const writes = (method: string, path: RegExp) =>
    github.calls(method, path).filter((request) => request.applied === true);
  const once = (
    what: string,
    requests: RecordedRequest[],
    key: (r: RecordedRequest) => string[],
  ) => {
    const seen = new Map<string, number>();
    for (const request of requests) {
      for (const k of key(request)) seen.set(k, (seen.get(k) ?? 0) + 1);
    }
    for (const [k, count] of seen) if (count > 1) problems.push(`${what} ${k} made ${count} times`);
  };
  once("comment", writes("POST", /\/issues\/\d+\/comments$/), (r) =>
    [...String(r.body.body).matchAll(/<!-- clustercode:[a-z]+:[A-Za-z0-9/._-]+ -->/g)].map(
      ([marker]) => marker,
    ),
  );
  once("check run", writes("POST", /\/check-runs$/), (r) => [
    `${String(r.body.external_id)}@${String(r.body.head_sha)}`,
  ]);
  once("pull request", writes("POST", /\/pulls$/), (r) => [String(r.body.head)]);
  once("review request", writes("POST", /\/pulls\/\d+\/requested_reviewers$/), (r) => [
    `${r.path} ${JSON.stringify(r.body)}`,
  ]);
  once("issue", writes("POST", /\/issues$/), (r) => [String(r.body.title)]);
  return problems;
}

/**
 * What GitHub shows of each run must not have been dropped: its status comment exists and
 * says the run's status.
 */
export async function surfaceProblems(
  store: Store,
  github: FakeGitHub,
  runIds: string[],
): Promise<string[]> {
  const problems: string[] = [];
  for (const runId of runIds) {
    const status = (await store.getRun(runId))?.status ?? "missing";
    const comment = github.comments.find((c) =>
      c.body.includes(`<!-- clustercode:run:${runId} -->`),
    );
    if (comment === undefined) problems.push(`run ${runId} has no status comment`);
    else if (!comment.body.includes(status.replace("_", " "))) {
      problems.push(`run ${runId}'s status comment does not say ${status}`);
    }
  }
  return problems;
}
