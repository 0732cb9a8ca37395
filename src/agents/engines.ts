import type { EngineCommand, RunDefinition } from "../engine/model.js";
import type { Workflow } from "../workflow/workflow.schema.js";
import { BUILT_IN_ENGINE_FACTS, type BuiltInEngine } from "../workflow/built-in-engines.js";

/** What the engine's agent is told; the task itself is in the prompt file. */
const INSTRUCTION = "Read the task in the file {prompt_file} and carry it out in this repository.";

/** The model provider the built-in `codex` engine configures (Codex's own needs CODEX_API_KEY). */
const CODEX_PROVIDER = "clustercode-openai";

/**
 * The built-in agent CLIs as command templates, one per name in `BUILT_IN_ENGINES`. The prompt
 * is a file the agent is told to read: nothing from an issue is ever spliced into argv. Secrets
 * reach the CLI as environment variables of the DevBox, never through the prompt or argv.
 *
 * - `claude`: Claude Code in print mode. `--output-format json` prints one JSON result whose
 *   `total_cost_usd` is the turn's cost and `usage` its tokens. Permissions are skipped because
 *   the DevBox is a disposable container and nobody is there to answer prompts. It reads
 *   `ANTHROPIC_API_KEY` (or a token) and `ANTHROPIC_BASE_URL` itself.
 * - `codex`: `codex exec --json` prints JSON Lines events; the last, `turn.completed`, carries
 *   `usage` (`input_tokens`, `cached_input_tokens`, `output_tokens`). Codex reports no cost, so
 *   the turn is priced from its usage and model (`estimateCostUsd`). Codex ignores
 *   `OPENAI_BASE_URL` and its built-in provider reads `CODEX_API_KEY`, so the command declares a
 *   provider that reads `OPENAI_API_KEY` and takes its base URL from `OPENAI_BASE_URL` when set.
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
    credentials: {
      env: [...BUILT_IN_ENGINE_FACTS.claude.credentialEnv],
      homeFiles: [".claude/.credentials.json"],
    },
  },
  codex: {
    command: [
      "codex",
      "exec",
      "--json",
      "--model",
      "{model}",
      "--sandbox",
      "workspace-write",
      "--skip-git-repo-check",
      // OpenAI's hosted web search bills what the proxy cannot bound (and fetches past the
      // DevBox's egress walls): off, so that a budgeted run can use Codex at all.
      "-c",
      'web_search="disabled"',
      "-c",
      `model_provider=${CODEX_PROVIDER}`,
      "-c",
      `model_providers.${CODEX_PROVIDER}={ name = "OpenAI", env_key = "OPENAI_API_KEY", wire_api = "responses", supports_websockets = false }`,
      "-c",
      `model_providers.${CODEX_PROVIDER}.base_url={env:OPENAI_BASE_URL}`,
      INSTRUCTION,
    ],
    usageJsonPath: "usage",
    priceFromUsage: true,
    credentials: { env: [...BUILT_IN_ENGINE_FACTS.codex.credentialEnv] },
  },
} satisfies Record<BuiltInEngine, EngineCommand>;

/** The engines a run of `workflow` may use: built-ins, overridden by the workflow's own. */
export function resolveEngines(workflow: Workflow): RunDefinition["engines"] {
  const engines: Record<string, EngineCommand> = { ...BUILT_IN_ENGINE_COMMANDS };
  for (const [name, engine] of Object.entries(workflow.engines ?? {})) {
    engines[name] = declaredEngine(engine);
  }
  return engines;
}

/**
 * A declared engine as the engine runs it. With `usage` but no `cost`, its turns are priced from
 * the tokens it reports, as the built-in `codex` is.
 */
function declaredEngine(
  engine: NonNullable<Workflow["engines"]>[string] | undefined,
): EngineCommand {
  if (engine === undefined) return { command: [] };
  const usage = engine.usage;
  return {
    command: engine.command,
    ...(engine.cost === undefined ? {} : { costJsonPath: engine.cost.json_path }),
    ...(usage === undefined
      ? {}
      : {
          usagePaths: {
            inputTokens: usage.input_tokens,
            outputTokens: usage.output_tokens,
            ...(usage.cached_input_tokens === undefined
              ? {}
              : { cachedInputTokens: usage.cached_input_tokens }),
          },
          ...(engine.cost === undefined ? { priceFromUsage: true } : {}),
        }),
  };
}
