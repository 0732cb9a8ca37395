/**
 * The node table: one {@link NodeBehaviour} per workflow node kind, each in its own module
 * (`run`, `loop`, `prototype`, `decision`, `approval`). `step` and the run-level modules
 * (flow.ts routes edges, stop.ts stops, retry.ts retries) look the active node's kind up here
 * and call its hooks — `enter`, `start`, `onCommandFinished`, `onJudged`, `onLedgerTotal`,
 * `onTimer`, `stop`, … — instead of switching on the kind themselves.
 *
 * The node modules never import this table nor those run-level modules: when a node's work ends
 * they route, end the run or stop through the `RunMoves` the transition carries (transition.ts), so
 * nothing under src/engine imports itself back.
 */
import type { NodeKind } from "../../workflow/workflow.schema.js";
import { APPROVAL } from "./approval.js";
import { DECISION } from "./decision.js";
import { LOOP } from "./loop.js";
import type { NodeBehaviour } from "./node-behaviour.js";
import { PROTOTYPE } from "./prototype.js";
import { RUN } from "./run.js";

/** What each node kind does, by kind. */
export const NODE_KINDS: Readonly<Record<NodeKind, NodeBehaviour>> = {
  run: RUN,
  loop: LOOP,
  prototype: PROTOTYPE,
  decision: DECISION,
  approval: APPROVAL,
};
