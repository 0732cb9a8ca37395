import type { Finding } from "./finding.js";
import type { WorkflowGraph } from "./graph.js";
import type { SourceMap } from "./source-map.js";

/** What a rule checks against: the graph, where things are, and the raw parsed YAML. */
export interface RuleContext {
  graph: WorkflowGraph;
  source: SourceMap;
  data: Record<string, unknown>;
}

/** A graph rule: the findings it makes of one workflow. */
export type Rule = (context: RuleContext) => Finding[];
