import type { RunDefinition } from "../engine/model.js";
import type { Workflow } from "../workflow/workflow.schema.js";

/**
 * The built-in agent CLIs as command templates. The prompt is a file the agent is told to read:
 * nothing from an issue is ever spliced into argv.
 */
export const BUILT_IN_ENGINE_COMMANDS: RunDefinition["engines"] = {
  claude: {
    command: [
      "claude",
      "-p",
      "--output-format",
      "json",
      "--model",
      "{model}",
      "--dangerously-skip-permissions",
      "Read the task in the file {prompt_file} and carry it out in this repository.",
    ],
    costJsonPath: "total_cost_usd",
  },
  codex: {
    command: [
      "codex",
      "exec",
      "--json",
      "--model",
      "{model}",
      "--full-auto",
      "Read the task in the file {prompt_file} and carry it out in this repository.",
    ],
  },
};

/** The engines a run of `workflow` may use: built-ins, overridden by the workflow's own. */
export function resolveEngines(workflow: Workflow): RunDefinition["engines"] {
  const engines: Record<string, RunDefinition["engines"][string]> = { ...BUILT_IN_ENGINE_COMMANDS };
  for (const [name, engine] of Object.entries(workflow.engines ?? {})) {
    engines[name] = {
      command: engine.command,
      ...(engine.cost === undefined ? {} : { costJsonPath: engine.cost.json_path }),
    };
  }
  return engines;
}
