import { budgetWithoutCost } from "./budget-rule.js";
import type { Rule } from "./rule-context.js";
import { engineWithoutKey } from "./engine-key-rule.js";
import { outputRules } from "./outputs-rule.js";
import { reworkNode } from "./rework-rule.js";
import { impossibleLabel, labelRules, decisionWithoutDevBox } from "./label-rules.js";
import {
  approvalRules,
  loopContract,
  prototypeVariants,
  unknownEngine,
} from "./node-kind-rules.js";
import {
  backEdgeCap,
  forwardCycle,
  maxNodes,
  noGiveUpBranch,
  reservedId,
  unknownNode,
  unreachableNode,
} from "./topology-rules.js";

export { MAX_NODES, unknownNode } from "./topology-rules.js";

/** The graph rules, each reporting every finding it has, in the order findings are listed. */
export const GRAPH_RULES: readonly Rule[] = [
  maxNodes,
  reservedId,
  unknownNode,
  forwardCycle,
  backEdgeCap,
  unreachableNode,
  impossibleLabel,
  labelRules,
  decisionWithoutDevBox,
  approvalRules,
  prototypeVariants,
  loopContract,
  unknownEngine,
  noGiveUpBranch,
  budgetWithoutCost,
  engineWithoutKey,
  reworkNode,
  outputRules,
];
