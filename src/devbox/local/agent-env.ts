import type { StartRequest } from "../executor.js";
import { AGENT_ENV } from "../protocol.js";

/**
 * What the runtime passes on to every local DevBox from its own environment. The certificate
 * settings carry a TLS-inspecting proxy's authority (the sandbox shows `/etc/ssl`), without
 * which `npm ci` behind such a proxy fails in the DevBox where it works on the host.
 */
const PASSED_ON = ["PATH", "HOME", "LANG", "NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE"] as const;

/** PATH, HOME, LANG and the certificate settings of the runtime's environment, where set. */
export function passedOn(runtimeEnv: NodeJS.ProcessEnv): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of PASSED_ON) {
    const value = runtimeEnv[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}

/** How a local agent's environment is made. */
export interface AgentEnvOptions {
  /** Whether the agent runs as root (then its agent CLIs are told they run in a sandbox). */
  asRoot: boolean;
  /** Says, where the user will look, what the agent will be missing. */
  warn: (line: string) => void;
}

/**
 * A local agent's environment: minimal, with the agent's timings and only the secrets its spec
 * names (from the runtime's environment, else the request's), then the request's own settings.
 */
export function agentEnvironment(
  request: StartRequest,
  runtimeEnv: NodeJS.ProcessEnv,
  options: AgentEnvOptions,
): Record<string, string> {
  const env = passedOn(runtimeEnv);
  for (const name of [AGENT_ENV.heartbeatMs, AGENT_ENV.lapseMs, ...request.spec.secrets]) {
    const value = runtimeEnv[name];
    if (value !== undefined) env[name] = value;
    else if (request.spec.secrets.includes(name) && request.env?.[name] === undefined) {
      // A local run may not need every production secret; say so where the user will look.
      options.warn(`clustercode: secret ${name} is not set in the runtime's environment`);
    }
  }
  return {
    ...env,
    // Claude Code refuses `--dangerously-skip-permissions` as root unless told it runs in a
    // sandbox. A runtime running as root is a container or a CI machine, whose DevBoxes are as
    // disposable as an ECS task's, so they say so with Claude Code's `IS_SANDBOX=1`.
    ...(options.asRoot ? { IS_SANDBOX: "1" } : {}),
    ...request.env,
    ...request.providerEnv,
    [AGENT_ENV.runId]: request.runId,
    [AGENT_ENV.branch]: request.spec.branch,
    [AGENT_ENV.baseBranch]: request.spec.baseBranch,
    ...(request.spec.sha === undefined ? {} : { [AGENT_ENV.startSha]: request.spec.sha }),
    [AGENT_ENV.setup]: JSON.stringify(request.spec.setup),
    [AGENT_ENV.secrets]: JSON.stringify(request.spec.secrets),
    ...(request.spec.harnesses === undefined
      ? {}
      : { [AGENT_ENV.harnesses]: JSON.stringify(request.spec.harnesses) }),
    ...(viaHub(request) ? { [AGENT_ENV.gitViaHub]: "1" } : {}),
  };
}

/** Whether the DevBox clones from the hub's git route (the hub holds the credentials). */
export function viaHub(request: StartRequest): boolean {
  return request.repository.startsWith(`${request.apiUrl.replace(/\/$/, "")}/internal/devboxes/`);
}
