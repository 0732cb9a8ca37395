import { AGENT_ENV } from "../protocol.js";
import { commandSandbox, COMMAND_SANDBOX_ENV, type CommandSandbox } from "./command-sandbox.js";

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
  /** How commands are sandboxed ({@link COMMAND_SANDBOX_ENV}); undefined: not at all. */
  sandbox?: CommandSandbox;
  /** The hub relay socket to open a 127.0.0.1 gateway to (local DevBoxes, own network). */
  hubSocket?: string;
  /** How the DevBox is isolated, as the evidence of its runs says it. */
  isolation?: string;
}

/** The agent's settings, or what is wrong with the environment. */
export type AgentSettingsResult =
  { ok: true; settings: AgentSettings } | { ok: false; message: string };

/**
 * Reads the agent's settings from the environment the executor built; the token from `token`
 * when given (read from stdin, where no command can find it) else from the environment.
 */
export function readAgentSettings(env: NodeJS.ProcessEnv, token?: string): AgentSettingsResult {
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
    token: token ?? required(AGENT_ENV.token),
    runId: required(AGENT_ENV.runId),
    branch: required(AGENT_ENV.branch),
    baseBranch: required(AGENT_ENV.baseBranch),
    setup: strings(AGENT_ENV.setup),
    secrets: strings(AGENT_ENV.secrets),
    harnesses: strings(AGENT_ENV.harnesses),
    heartbeatMs: milliseconds(AGENT_ENV.heartbeatMs, 3000),
    lapseMs: milliseconds(AGENT_ENV.lapseMs, 15_000),
  };
  const sandbox = commandSandbox(env[COMMAND_SANDBOX_ENV]);
  if (sandbox instanceof Error) problems.push(sandbox.message);
  else if (sandbox !== undefined) settings.sandbox = sandbox;
  const hubSocket = env[AGENT_ENV.hubSocket];
  if (hubSocket !== undefined && hubSocket !== "") settings.hubSocket = hubSocket;
  const isolation = env[AGENT_ENV.isolation];
  if (isolation !== undefined && isolation !== "") settings.isolation = isolation;
  if (token === "") problems.push("the token read from stdin is empty");
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
