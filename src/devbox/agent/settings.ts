import { AGENT_ENV } from "../protocol.js";

/** What the agent reads from its environment (see {@link AGENT_ENV}). */
export interface AgentSettings {
  token: string;
  runId: string;
  branch: string;
  baseBranch: string;
  setup: string[];
  /** Names of the environment variables that hold secrets. */
  secrets: string[];
  /** The agent CLIs whose `--version` to report when ready. */
  harnesses: string[];
  heartbeatMs: number;
  lapseMs: number;
}

/** The agent's settings, or what is wrong with the environment. */
export type AgentSettingsResult =
  { ok: true; settings: AgentSettings } | { ok: false; message: string };

/** Reads the agent's settings from the environment the executor built. */
export function readAgentSettings(env: NodeJS.ProcessEnv): AgentSettingsResult {
  const problems: string[] = [];
  const required = (name: string) => {
    const value = env[name];
    if (value === undefined || value === "") problems.push(`${name} is not set`);
    return value ?? "";
  };
  const milliseconds = (name: string, fallback: number) => {
    const text = env[name];
    if (text === undefined || text === "") return fallback;
    const value = Number(text);
    if (!Number.isInteger(value) || value <= 0) {
      problems.push(`${name} must be a positive number of milliseconds, got "${text}"`);
    }
    return value;
  };
  const strings = (name: string) => {
    const value = readStrings(name, env[name]);
    if (typeof value === "string") problems.push(value);
    return typeof value === "string" ? [] : value;
  };
  const settings: AgentSettings = {
    token: required(AGENT_ENV.token),
    runId: required(AGENT_ENV.runId),
    branch: required(AGENT_ENV.branch),
    baseBranch: required(AGENT_ENV.baseBranch),
    setup: strings(AGENT_ENV.setup),
    secrets: strings(AGENT_ENV.secrets),
    harnesses: strings(AGENT_ENV.harnesses),
    heartbeatMs: milliseconds(AGENT_ENV.heartbeatMs, 3000),
    lapseMs: milliseconds(AGENT_ENV.lapseMs, 15_000),
  };
  if (problems.length === 0 && settings.heartbeatMs >= settings.lapseMs) {
    problems.push(`${AGENT_ENV.heartbeatMs} must be shorter than ${AGENT_ENV.lapseMs}`);
  }
  return problems.length === 0
    ? { ok: true, settings }
    : { ok: false, message: problems.join("; ") };
}

/** Strings from variable `name`'s JSON array, or a message saying what is wrong. */
function readStrings(name: string, text: string | undefined): string[] | string {
  if (text === undefined || text.trim() === "") return [];
  const problem = `${name} must be a JSON array of strings`;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    if (error instanceof SyntaxError) return `${problem}: ${error.message}`;
    throw error;
  }
  return Array.isArray(value) && value.every((item) => typeof item === "string") ? value : problem;
}

/** The agent's environment minus its token (commands, agents included, never see it). */
export function commandEnvironment(
  env: NodeJS.ProcessEnv,
  settings: Pick<AgentSettings, "runId">,
): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && name !== AGENT_ENV.token) result[name] = value;
  }
  result[AGENT_ENV.runId] = settings.runId;
  return result;
}
