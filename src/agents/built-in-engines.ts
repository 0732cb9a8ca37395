/**
 * The agent CLIs every workflow may use without declaring them. The one list of their names:
 * the validator and the schema's descriptions read it, and the built-in commands
 * (`BUILT_IN_ENGINE_COMMANDS` in engines.ts) must give exactly these. Imports nothing, so the
 * workflow schema can read it without loading the agents' code.
 */
export const BUILT_IN_ENGINES = ["claude", "codex"] as const;

/** The name of a built-in engine. */
export type BuiltInEngine = (typeof BUILT_IN_ENGINES)[number];

/** Whose models each built-in engine runs, as judges name their provider. */
export const ENGINE_PROVIDERS: Readonly<Record<BuiltInEngine, string>> = {
  claude: "anthropic",
  codex: "openai",
};
