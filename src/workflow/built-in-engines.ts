/**
 * The agent CLIs every workflow may use without declaring them, as the workflow language knows
 * them: the one list of their names, whose models they run, how their turns get a cost and which
 * variables they authenticate with. The validator and the schema's descriptions read it; the
 * built-in commands (`BUILT_IN_ENGINE_COMMANDS` in src/agents/engines.ts) must agree with it.
 * Imports nothing, so the workflow schema can read it without loading the agents' code.
 */
export const BUILT_IN_ENGINES = ["claude", "codex"] as const;

/** The name of a built-in engine. */
export type BuiltInEngine = (typeof BUILT_IN_ENGINES)[number];

/** How an engine's turns come to have a cost. */
export type EngineSpend =
  /** The CLI prints its cost. */
  | "reported"
  /** The CLI prints its token usage, priced from the model price table. */
  | "priced"
  /** Neither: its turns count as free. */
  | "none";

/** What the validator and the engine know of a built-in engine. */
export interface BuiltInEngineFacts {
  /** Whose models it runs, as judges name their provider. */
  provider: string;
  spend: EngineSpend;
  /** The variables it authenticates with, any one of which is enough. */
  credentialEnv: readonly string[];
}

/** The facts of each built-in engine. */
export const BUILT_IN_ENGINE_FACTS: Readonly<Record<BuiltInEngine, BuiltInEngineFacts>> = {
  claude: {
    provider: "anthropic",
    spend: "reported",
    credentialEnv: [
      "ANTHROPIC_API_KEY",
      "ANTHROPIC_AUTH_TOKEN",
      "CLAUDE_CODE_OAUTH_TOKEN",
      "CLAUDE_CODE_USE_BEDROCK",
      "CLAUDE_CODE_USE_VERTEX",
    ],
  },
  codex: { provider: "openai", spend: "priced", credentialEnv: ["OPENAI_API_KEY"] },
};

/** The facts of `engine` when it is a built-in one. */
export function builtInEngineFacts(engine: string): BuiltInEngineFacts | undefined {
  return Object.hasOwn(BUILT_IN_ENGINE_FACTS, engine)
    ? BUILT_IN_ENGINE_FACTS[engine as BuiltInEngine]
    : undefined;
}
