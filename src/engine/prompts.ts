import type { WorkflowNode } from "../workflow/workflow.schema.js";
import type { DevBoxCommand } from "./commands.js";
import type { RunDefinition } from "./model.js";

type LoopNode = Extract<WorkflowNode, { kind: "loop" }>;

/**
 * The agent command for an engine. The prompt travels as a file; the requirement and gate
 * output are named by environment variables, never spliced into argv.
 */
export function agentCommand(
  definition: RunDefinition,
  agent: { engine: string; model?: string | undefined },
  prompt: string,
): DevBoxCommand {
  const engine = definition.engines[agent.engine];
  if (engine === undefined)
    throw new Error(`programmer error: engine ${agent.engine} is not resolved`);
  return {
    type: "agent",
    argv: engine.command,
    prompt,
    ...(agent.model === undefined ? {} : { model: agent.model }),
    ...(engine.costJsonPath === undefined ? {} : { costJsonPath: engine.costJsonPath }),
    ...(engine.usageJsonPath === undefined ? {} : { usageJsonPath: engine.usageJsonPath }),
    ...(engine.usagePaths === undefined ? {} : { usagePaths: engine.usagePaths }),
    ...(engine.priceFromUsage === true ? { priceFromUsage: true } : {}),
    ...(engine.credentials === undefined ? {} : { credentials: engine.credentials }),
  };
}

/** The prompt of one loop iteration. */
export function loopPrompt(
  node: LoopNode,
  iteration: number,
  failures: { gate: string }[],
): string {
  const max = node.budget?.max_iterations ?? 1;
  const gates = (node.gates ?? []).map((gate) => `- ${gate.name}: \`${gate.run}\``).join("\n");
  const lines = [
    node.goal,
    "",
    `This is iteration ${iteration} of at most ${max}. The work is done when every gate passes:`,
    gates,
    "",
    "The requirement is in the file named by CLUSTERCODE_BRIEF_FILE.",
  ];
  if (failures.length > 0) {
    lines.push(
      `These gates failed last iteration: ${failures.map((f) => f.gate).join(", ")}.`,
      "Their output is in the file named by CLUSTERCODE_FEEDBACK_FILE.",
    );
  }
  return lines.join("\n") + "\n";
}

/** Failed gate output as one feedback file. */
export function feedbackFile(failures: { gate: string; output: string }[]): string {
  return failures.map((f) => `## Gate ${f.gate} failed\n\n${f.output}\n`).join("\n");
}
