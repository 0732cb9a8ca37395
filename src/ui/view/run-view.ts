import type { NodeState } from "../../engine/node-states.js";
import type { ScorecardRow } from "../../scorecard/scorecard.js";
/**
 * The run page's data: what `GET /api/runs/…/<runId>` returns and what the page renders. Plain
 * JSON built on the server from the stored run and its evidence (see build-run-view.ts); this
 * module is types only, so the browser loads nothing of the server with it.
 */

/** A workflow node on the graph, with where the run stands on it. */
export interface GraphNodeView {
  id: string;
  title: string;
  kind: string;
  /** Its latest visit's result, `running` or `waiting` with the token on it, or `not-reached`. */
  state: NodeState;
  visits: number;
  /** Time spent in it over all its visits so far. */
  durationMs: number;
}

/** An edge of the graph, with how often the run crossed it. */
export interface GraphEdgeView {
  from: string;
  to: string;
  label?: string;
  back: boolean;
  /** Whether the run took it. */
  taken: boolean;
  traversals: number;
  maxTraversals?: number;
}

/** The workflow graph: nodes in the file's order (the first is the entry), edges, terminals. */
export interface GraphView {
  nodes: GraphNodeView[];
  edges: GraphEdgeView[];
  /** Terminals the edges reach (`done`, `failed`, `escalated`), with the one the run ended at. */
  terminals: { id: string; reached: boolean }[];
  /** Where everything is drawn, laid out on the server (elkjs). */
  layout: GraphLayout;
}

/** A point of the graph's drawing, in pixels from its top-left corner. */
export interface LayoutPoint {
  x: number;
  y: number;
}

/** The graph's layout: boxes of nodes and terminals by id, and each edge's route (by index). */
export interface GraphLayout {
  width: number;
  height: number;
  boxes: Record<string, LayoutPoint & { width: number; height: number }>;
  /** Routes in the edge's own direction (a back-edge's too), and its label's top-left corner. */
  edges: { points: LayoutPoint[]; label?: LayoutPoint }[];
}

/** One evidence entry as a line of the timeline. */
export interface EvidenceLine {
  seq: number;
  at: number;
  kind: string;
  /** A one-line account: what ran, why it routed, what changed, who accepted. */
  summary: string;
  /** The entry's recorded facts, as label and text; only what the store holds. */
  facts: { label: string; value: string }[];
  /** The tail of a command's output, when recorded. Untrusted text. */
  output?: string;
}

/** Tokens an agent or judge reported. */
export interface TokensView {
  input: number;
  output: number;
  cachedInput?: number;
}

/** A gate command's result. */
export interface GateView {
  name: string;
  exitCode: number;
  output?: string;
}

/** One iteration of a loop. */
export interface IterationView {
  iteration: number;
  agent?: { engine?: string; model?: string; exitCode: number; output?: string };
  gates: GateView[];
  /** Gate outputs handed to the next iteration as feedback. */
  feedback: { gate: string; output: string }[];
  costUsd: number;
  tokens?: TokensView;
  /** False while the iteration is still going. */
  finished: boolean;
}

/** A loop visit: its goal, budget and iterations. */
export interface LoopView {
  goal: string;
  maxIterations?: number;
  gateNames: string[];
  iterations: IterationView[];
}

/** One contender of a prototype race. */
export interface VariantView {
  variant: number;
  engine?: string;
  model?: string;
  branch?: string;
  gates: GateView[];
  /** won, passed, failed, cancelled, or the phase it is in. */
  result: string;
  costUsd: number;
  durationMs: number;
  tokens?: TokensView;
  failure?: string;
}

/** A prototype visit: the brief, the variants side by side, and how the winner was chosen. */
export interface PrototypeView {
  brief: string;
  select: string;
  variants: VariantView[];
  winner?: number;
  /** Why the winner won: the judge's reasoning or `first to pass`. */
  why?: string;
  judge?: { model?: string; verdict?: string; reasoning?: string; error?: string };
}

/** A decision's verdict. */
export interface DecisionView {
  evaluator: string;
  verdict?: string;
  reasoning?: string;
  exitCode?: number;
  error?: string;
  model?: string;
  /** The run branch's head the verdict judged. */
  headSha?: string;
  /** The branch moved after the verdict: it judged older work. */
  stale?: boolean;
}

/** Who answered an approval, and where. */
export interface AnswerView {
  decision: string;
  actor: string;
  note?: string;
  where?: string;
  at: number;
  /** The head commit the answer looked at. */
  headSha?: string;
  /** The branch moved after the answer. */
  stale?: boolean;
}

/** One visit of the token to a node. */
export interface VisitView {
  index: number;
  node: string;
  title: string;
  kind: string;
  attempt: number;
  startedAt: number;
  endedAt?: number;
  /** How the visit ended or stands, as its node is coloured. */
  state: NodeState;
  outcome?: string;
  label?: string;
  reason?: string;
  costUsd: number;
  /** The commit the visit's checkpoint made. */
  commit?: string;
  decision?: DecisionView;
  answer?: AnswerView;
  /** What the node was told when entered again (one line per item): untrusted text. */
  fedBack?: string[];
  loop?: LoopView;
  prototype?: PrototypeView;
  evidence: EvidenceLine[];
}

/** Spend against one budget. */
export interface BudgetView {
  /** What the budget is: `run`, `iteration of implement`, `daily (implement)`. */
  name: string;
  spentUsd: number;
  limitUsd?: number;
}

/** The approval a run waits on, and who may answer. */
export interface ApprovalView {
  node: string;
  title: string;
  visit: number;
  message?: string;
  deadline: number;
  /** `@login` and `@org/team`; empty means anyone with write access. */
  approvers: string[];
  preventSelfApproval: boolean;
}

/** Everything the run page shows. */
export interface RunView {
  runId: string;
  repo: string;
  workflow: string;
  status: string;
  /** Whether the run is over: the page stops updating. */
  final: boolean;
  reason?: string;
  startedAt: number;
  updatedAt: number;
  startedBy?: string;
  /** The requirement's first line. Untrusted text. */
  brief: string;
  branch: string;
  baseBranch: string;
  lastSha?: string;
  links: { branch?: string; pullRequest?: string; commit?: string };
  activeNode?: string;
  graph: GraphView;
  visits: VisitView[];
  budgets: BudgetView[];
  approval?: ApprovalView;
  /** Entries before the first node (the run's start). */
  runEvidence: EvidenceLine[];
}

/** A run in a list. */
export interface RunSummaryView {
  runId: string;
  repo: string;
  workflow: string;
  status: string;
  activeNode?: string;
  branch: string;
  costUsd: number;
  createdAt: number;
  updatedAt: number;
  /** The run page, relative to the server's root. */
  page: string;
}

/** What `GET /api/runs/…` (a list) returns. */
export interface RunListView {
  title: string;
  runs: RunSummaryView[];
  /** The judges of these runs: how often what followed overturned their verdicts. */
  judges: ScorecardRow[];
}
