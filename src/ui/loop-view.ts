import type { EvidenceRecord } from "../store/store.js";
import type { WorkflowNode } from "../workflow/workflow.schema.js";
import {
  addTokens,
  entryOf,
  numberOf,
  textOf,
  tokensOf,
  type EntryFields,
} from "./evidence-lines.js";
import type { IterationView, LoopView } from "./view/run-view.js";

type LoopNode = Extract<WorkflowNode, { kind: "loop" }>;

/**
 * A loop visit's iterations, read from its evidence: each iteration's agent turn, then its
 * gates (matched to the node's gates by their command, in order), then the `loop.iteration`
 * entry that closes it. Failed gates' output is what the next iteration was handed.
 */
export function buildLoopView(node: LoopNode, records: readonly EvidenceRecord[]): LoopView {
  const gates = node.gates ?? [];
  const dispatched = new Map<string, EntryFields>();
  const iterations: IterationView[] = [];
  let current: IterationView | undefined;
  const open = (): IterationView => {
    current ??= {
      iteration: iterations.length + 1,
      gates: [],
      feedback: [],
      costUsd: 0,
      finished: false,
    };
    return current;
  };
  for (const record of records) {
    const entry = entryOf(record);
    const command = textOf(entry.command);
    if (entry.kind === "command.dispatched" && command !== undefined) {
      dispatched.set(command, entry);
    } else if (entry.kind === "command.finished" && command !== undefined) {
      const sent = dispatched.get(command);
      const exitCode = numberOf(entry.exitCode) ?? -1;
      const output = textOf(entry.output);
      if (sent?.agent !== undefined) {
        recordAgentTurn(open(), entry, sent, exitCode, output);
      } else if (sent?.run !== undefined && current !== undefined) {
        const script = textOf(sent.run);
        const index = current.gates.length;
        const gate =
          gates[index]?.run === script ? gates[index] : gates.find((g) => g.run === script);
        current.gates.push({
          name: gate?.name ?? script ?? "gate",
          exitCode,
          ...(output === undefined ? {} : { output }),
        });
      }
    } else if (entry.kind === "loop.iteration") {
      iterations.push(closeIteration(open(), entry));
      current = undefined;
    }
  }
  if (current !== undefined) iterations.push(current);
  const max = node.budget?.max_iterations;
  return {
    goal: node.goal,
    gateNames: gates.map((gate) => gate.name),
    iterations,
    ...(max === undefined ? {} : { maxIterations: max }),
  };
}

/** Records a finished agent turn on its iteration: exit code, engine, model, output, spend. */
function recordAgentTurn(
  iteration: IterationView,
  entry: EntryFields,
  sent: EntryFields,
  exitCode: number,
  output: string | undefined,
): void {
  const engine = textOf(entry.engine);
  const model = textOf(entry.model) ?? textOf(sent.model);
  iteration.agent = {
    exitCode,
    ...(engine === undefined ? {} : { engine }),
    ...(model === undefined ? {} : { model }),
    ...(output === undefined ? {} : { output }),
  };
  iteration.costUsd += numberOf(entry.costUsd) ?? 0;
  const tokens = addTokens(iteration.tokens, tokensOf(entry.usage));
  if (tokens !== undefined) iteration.tokens = tokens;
}

/** Closes an iteration with its `loop.iteration` entry: the failed gates become its feedback. */
function closeIteration(iteration: IterationView, entry: EntryFields): IterationView {
  iteration.iteration = numberOf(entry.iteration) ?? iteration.iteration;
  iteration.costUsd = numberOf(entry.costUsd) ?? iteration.costUsd;
  iteration.feedback = iteration.gates
    .filter((gate) => gate.exitCode !== 0)
    .map((gate) => ({ gate: gate.name, output: gate.output ?? "" }));
  iteration.finished = true;
  return iteration;
}
