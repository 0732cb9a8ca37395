import type { RunDefinition } from "../engine/model.js";
import type { Workflow } from "../workflow/workflow.schema.js";

/** What the engine's agent is told; the task itself is in the prompt file. */
const INSTRUCTION = "Read the task in the file {prompt_file} and carry it out in this repository.";

/**
 * The built-in agent CLIs as command templates. The prompt is a file the agent is told to read:
 * nothing from an issue is ever spliced into argv. Secrets reach the CLI as environment
 * variables of the DevBox, never through the prompt.
 *
 * - `claude`: Claude Code in print mode. `--output-format json` prints one JSON result whose
 *   `total_cost_usd` is the turn's cost and `usage` its tokens. Permissions are skipped because
 *   the DevBox is a disposable container and nobody is there to answer prompts.
 * - `codex`: `codex exec --json` prints JSON Lines events; the last, `turn.completed`, carries
 *   `usage` (`input_tokens`, `cached_input_tokens`, `output_tokens`). Codex reports no cost, so
 *   none is recorded and cost budgets cannot see it (the validator warns).
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
      INSTRUCTION,
    ],
    costJsonPath: "total_cost_usd",
    usageJsonPath: "usage",
  },
  codex: {
    command: ["codex", "exec", "--json", "--model", "{model}", "--full-auto", INSTRUCTION],
    usageJsonPath: "usage",
  },
};

/** Does engine `name` (built in, or declared in `workflow`) report what its turns cost? */
export function engineReportsCost(workflow: Pick<Workflow, "engines">, name: string): boolean {
  const declared = workflow.engines?.[name];
  if (declared !== undefined) return declared.cost !== undefined;
  return BUILT_IN_ENGINE_COMMANDS[name]?.costJsonPath !== undefined;
}

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
