import type { Transition } from "./transition.js";

/** Adds what a command or judge cost to the visit and the run; false when the run's budget broke. */
export function addCost(t: Transition, usd: number | undefined): boolean {
  if (usd === undefined || usd <= 0) return true;
  const s = t.snapshot;
  s.costUsd += usd;
  const visit = s.active === undefined ? undefined : s.visits[s.active.visit];
  if (visit !== undefined) visit.costUsd += usd;
  const max = t.definition.workflow.budget?.max_cost_usd;
  const spent = s.costUsd - (s.budgetBaseUsd ?? 0);
  if (max === undefined || spent <= max) return true;
  t.stopNode("budget", `run budget exceeded: spent $${spent.toFixed(2)} of $${max}`);
  return false;
}
