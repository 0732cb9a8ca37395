import type { NodeKind, WorkflowNode } from "../../workflow/workflow.schema.js";
import type { Transition } from "../transition.js";

/** A workflow node of one kind. */
export type NodeOf<K extends NodeKind> = Extract<WorkflowNode, { kind: K }>;

/** The active node, which the node table dispatched to by its `kind`. */
export function activeNodeOf<K extends NodeKind>(t: Transition, kind: K): NodeOf<K> {
  const node = t.node(t.active.node);
  if (node.kind !== kind) throw new Error(`programmer error: ${t.active.node} is no ${kind}`);
  return node as NodeOf<K>;
}
