import { AGENT_ENV } from "../protocol.js";
import type { Settings } from "../../settings/index.js";
import { commandSandbox, type CommandSandbox } from "./command-sandbox.js";
import { parseSetupCache, type SetupCacheSettings } from "./setup-cache.js";

/** What the agent reads from its environment (see {@link AGENT_ENV}). */
export interface AgentSettings {
  token: string;
  runId: string;
  branch: string;
  baseBranch: string;
  /** The commit the DevBox must start on (the run's last checkpoint), when there is one. */
  startSha?: string;
  setup: string[];
  /** `devbox.cache` and where it is kept; undefined when the workflow caches nothing. */
  setupCache?: SetupCacheSettings;
  /** Names of the environment variables that hold secrets. */
  secrets: string[];
  /** The agent CLIs whose `--version` to report when ready. */
  harnesses: string[];
  heartbeatMs: number;
  lapseMs: number;
  /** How commands are sandboxed (CLUSTERCODE_COMMAND_SANDBOX); undefined: not at all. */
  sandbox?: CommandSandbox;
  /** The hub relay socket to open a 127.0.0.1 gateway to (local DevBoxes, own network). */
  hubSocket?: string;
  /** How the DevBox is isolated, as the evidence of its runs says it. */
  isolation?: string;
  /** The checkout's origin is the hub's git route, reached with the agent's hub token. */
  gitViaHub?: true;
}

/** The agent's settings, or what is wrong with the environment. */
export type AgentSettingsResult =
  { ok: true; settings: AgentSettings } | { ok: false; message: string };

/**
 * The agent's settings from the decoded ones (the executor set them; their kinds were checked
 * when they were decoded); the token from `token` when given (read from stdin, where no command
 * can find it) else from the environment. Says what is missing or inconsistent.
 */
export function readAgentSettings(decoded: Settings, token?: string): AgentSettingsResult {
  const { agent, devboxes } = decoded;
  const problems: string[] = [];
  const required = (name: string, value: string | undefined) => {
    if (value === undefined) problems.push(`${name} is not set`);
    return value ?? "";
  };
  const settings: AgentSettings = {
    token: token ?? required(AGENT_ENV.token, agent.token),
    runId: required(AGENT_ENV.runId, agent.runId),
    branch: required(AGENT_ENV.branch, agent.branch),
    baseBranch: required(AGENT_ENV.baseBranch, agent.baseBranch),
    setup: agent.setup,
    secrets: agent.secretNames,
    harnesses: agent.harnesses,
    heartbeatMs: devboxes.heartbeatMs,
    lapseMs: devboxes.lapseMs,
  };
  const sandbox = commandSandbox(agent.commandSandbox, agent.setupCacheDirs);
  if (sandbox instanceof Error) problems.push(sandbox.message);
  else if (sandbox !== undefined) settings.sandbox = sandbox;
  const setupCache = parseSetupCache(agent.setupCache, agent.setupCacheDirs);
  if (setupCache instanceof Error) problems.push(setupCache.message);
  else if (setupCache !== undefined) settings.setupCache = setupCache;
  if (agent.startSha !== undefined) settings.startSha = agent.startSha;
  if (agent.hubSocket !== undefined) settings.hubSocket = agent.hubSocket;
  if (agent.isolation !== undefined) settings.isolation = agent.isolation;
  if (agent.gitViaHub === true) settings.gitViaHub = true;
  if (token === "") problems.push("the token read from stdin is empty");
  if (problems.length === 0 && settings.heartbeatMs >= settings.lapseMs) {
    problems.push(`${AGENT_ENV.heartbeatMs} must be shorter than ${AGENT_ENV.lapseMs}`);
  }
  return problems.length === 0
    ? { ok: true, settings }
    : { ok: false, message: problems.join("; ") };
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
