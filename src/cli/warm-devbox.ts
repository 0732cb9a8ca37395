import { commandSandbox } from "../devbox/agent/command-sandbox.js";
import { pointOriginAt, runWarmAgent } from "../devbox/agent/warm-agent.js";
import { readAgentSettings } from "../devbox/agent/settings.js";
import { runDevBoxAgent } from "../devbox/agent/agent.js";
import { AGENT_ENV } from "../devbox/protocol.js";
import { decodeSettings } from "../settings/index.js";
import type { CommandIo } from "./command.js";
import { UsageError } from "./command.js";

/**
 * `clustercode devbox --api URL --warm ID --token-stdin`: a warm ECS task's agent. It sets up
 * the default branch's checkout with nothing of any run, waits for its claim, then becomes the
 * claimed DevBox's agent, exactly as a cold one started with the claim's environment.
 */
export async function runWarmDevBox(
  io: CommandIo,
  options: { apiUrl: string; warmId: string; token: string; signal: AbortSignal },
): Promise<number> {
  const { agent, devboxes } = io.settings;
  const sandbox = commandSandbox(agent.commandSandbox);
  if (sandbox instanceof Error) throw new UsageError(sandbox.message);
  const env = definedOnly(io.env);
  const outcome = await runWarmAgent({
    ...options,
    cwd: io.cwd,
    env,
    setup: agent.setup,
    ...(sandbox === undefined ? {} : { sandbox }),
    lapseMs: devboxes.lapseMs,
    log: io.stderr,
  });
  if ("exitCode" in outcome) return outcome.exitCode;
  const { claim } = outcome;
  // The claim's environment is the one a cold task of this DevBox gets; its token stays out.
  const claimed: Record<string, string> = { ...env, ...claim.env };
  delete claimed[AGENT_ENV.token];
  const settings = readAgentSettings(decodeSettings(claimed), claim.token);
  if (!settings.ok) throw new UsageError(settings.message);
  const origin = claim.env.CLUSTERCODE_REPOSITORY;
  if (origin !== undefined)
    await pointOriginAt({ cwd: io.cwd, env, signal: options.signal }, origin);
  io.stderr.write(`clustercode warm: claimed as ${claim.devboxId}\n`);
  return runDevBoxAgent({
    apiUrl: options.apiUrl,
    devboxId: claim.devboxId,
    cwd: io.cwd,
    env: claimed,
    settings: settings.settings,
    signal: options.signal,
    log: io.stderr,
  });
}

function definedOnly(env: NodeJS.ProcessEnv): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined) result[name] = value;
  return result;
}
