import { builtInEngineFacts } from "../../workflow/built-in-engines.js";
import { addCost } from "../cost.js";
import type { Transition } from "../transition.js";
import type { JudgeEvent } from "./node-behaviour.js";

/**
 * Records a judge's answer (or failure) for the active node: its verdict, reasoning, model,
 * tokens and cost become evidence, and its cost counts against the run budget. False when that
 * cost broke the budget (the node is being stopped).
 */
export function recordVerdict(t: Transition, event: JudgeEvent): boolean {
  t.record("decision.evaluated", {
    node: t.active.node,
    evaluator: "agent",
    ...t.judgedShas(),
    ...judgeRecord(t, event.model, event.type === "judge.verdict" ? event.provider : undefined),
    ...(event.type === "judge.failed"
      ? {
          error: event.reason,
          ...(event.model === undefined ? {} : { model: event.model }),
          ...(event.costUsd === undefined ? {} : { costUsd: event.costUsd }),
          ...(event.usage === undefined ? {} : { usage: event.usage }),
        }
      : {
          verdict: event.label,
          reasoning: event.reasoning,
          model: event.model,
          costUsd: event.costUsd,
          ...(event.usage === undefined ? {} : { usage: event.usage }),
        }),
  });
  return addCost(t, event.costUsd);
}

/** An engine that wrote work a judge reads: its provider as judges name theirs. */
interface Author {
  engine: string;
  model?: string;
  provider: string;
}

function authorOf(engine: string, model: string | undefined): Author {
  const provider = builtInEngineFacts(engine)?.provider ?? engine;
  return { engine, provider, ...(model === undefined ? {} : { model }) };
}

/**
 * Who judged and whose work: the judge's provider and model, the engines that wrote what it read
 * (a prototype's variants, or the run's last agent turn), and whether the judge was independent
 * of every one of them — a different provider, or the same provider with a different model. Work
 * no agent wrote is judged independently. The scorecard counts verdicts by these.
 */
function judgeRecord(
  t: Transition,
  answeredModel: string | undefined,
  answeredBy: string | undefined,
): Record<string, unknown> {
  const node = t.definition.workflow.nodes[t.active.node];
  const declared = node !== undefined && "judge" in node ? node.judge : undefined;
  if (declared === undefined) return {};
  const judge = { ...declared, provider: answeredBy ?? declared.provider };
  const model = answeredModel ?? judge.model;
  const authors =
    node?.kind === "prototype"
      ? node.variants.map((variant) => authorOf(variant.engine, variant.model))
      : t.snapshot.lastAuthor === undefined
        ? []
        : [authorOf(t.snapshot.lastAuthor.engine, t.snapshot.lastAuthor.model)];
  const independent = authors.every(
    (author) =>
      author.provider !== judge.provider || (author.model !== undefined && author.model !== model),
  );
  return { provider: judge.provider, judgeModel: model, authors, independent };
}
