import { execFile, spawn, type ChildProcess } from "node:child_process";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import { DevBoxError } from "../errors.js";
import { COMMAND_SANDBOX_ENV } from "../agent/command-sandbox.js";
import { AGENT_ENV } from "../protocol.js";
import { HubRelay } from "./hub-relay.js";
import { ownDirectory, writeFileInside } from "./no-follow.js";
import { HUB_SOCKET_IN_SANDBOX, sandboxedAgent, type Isolation } from "./sandbox.js";

const run = promisify(execFile);

/** What starting one local agent takes. */
export interface LaunchRequest {
  isolation: Isolation;
  devboxId: string;
  apiUrl: string;
  /** Handed to the agent on its stdin, never in argv, environment or files. */
  token: string;
  /** The DevBox's directory, its checkout (the agent's cwd), TMPDIR and HOME. */
  dir: string;
  checkout: string;
  tmp: string;
  home: string;
  /** The clone source, bound into the sandbox when it is a local path. */
  repository: string;
  /** The host's mirror a partial checkout fetches its missing blobs from (bound read-only). */
  mirror?: string;
  /** The setup cache's directories: the run branch's (bound writable), the base branch's. */
  setupCache?: { writable: string; readOnly: string[] };
  cliPath: string;
  /** The agent CLIs (argv[0]) the run starts: the sandbox shows where they are installed. */
  commands?: readonly string[];
  /** The hub's egress proxy with the DevBox's egress key, for commands' `HTTPS_PROXY`. */
  egressProxy?: string;
  /** The agent's environment, without the token. */
  env: Record<string, string>;
  /** Set when the app runs as root: the DevBox's own uid and gid. */
  uid?: number;
  /** The log file's descriptor, the agent's stdout and stderr. */
  logFd: number;
}

/** A started agent and the relay that is its only way to the hub (none without isolation). */
export interface Launched {
  child: ChildProcess;
  relay?: HubRelay;
}

/** Starts the agent, sandboxed unless the isolation is none, and writes it its token. */
export async function launchAgent(request: LaunchRequest): Promise<Launched> {
  // What ran in the DevBox before (a warm setup) may have left a link to a host directory here.
  await ownDirectory(request.dir, relative(request.dir, request.home), 0o700);
  const command = [
    process.execPath,
    request.cliPath,
    "devbox",
    "--api",
    request.apiUrl,
    "--devbox",
    request.devboxId,
    "--token-stdin",
  ];
  const env: Record<string, string> = {
    ...request.env,
    TMPDIR: request.tmp,
    [AGENT_ENV.isolation]: request.isolation.label,
  };
  if (request.isolation.kind === "none") {
    const [file = "", ...args] = command;
    return { child: await spawnAgent(file, args, env, request) };
  }
  await prepareSandboxedFiles(request);
  const relay = await HubRelay.open(join(request.dir, "hub.sock"), request.apiUrl, request.uid);
  try {
    const port = new URL(request.apiUrl).port || "80";
    const proxy = request.egressProxy ?? `http://127.0.0.1:${port}`;
    const { file, args } = sandboxedAgent(
      {
        bwrap: request.isolation.bwrap,
        devboxDir: request.dir,
        hubSocket: relay.path,
        ...(isLocalPath(request.repository) ? { localSource: request.repository } : {}),
        ...(request.mirror === undefined ? {} : { mirror: request.mirror }),
        ...(request.setupCache === undefined ? {} : { setupCache: request.setupCache }),
        cliPath: request.cliPath,
        path: env.PATH ?? "",
        ...(request.commands === undefined ? {} : { commands: request.commands }),
        ...(request.uid === undefined ? {} : { uid: request.uid }),
        env: sandboxedAgentEnv(env, request.home, proxy),
        cwd: request.checkout,
      },
      command,
    );
    return { child: await spawnAgent(file, args, {}, request), relay };
  } catch (error) {
    await relay.close();
    throw error;
  }
}

/**
 * Trusts the bound-in local source and mirror in the DevBox's git config (they are owned by the
 * app's user, not the DevBox's), and gives the DevBox its files. The container executor's too.
 */
export async function prepareSandboxedFiles(
  request: Pick<
    LaunchRequest,
    "repository" | "mirror" | "uid" | "dir" | "checkout" | "tmp" | "home"
  >,
): Promise<void> {
  const trusted = [
    ...(isLocalPath(request.repository) ? [request.repository, `${request.repository}/.git`] : []),
    ...(request.mirror === undefined ? [] : [request.mirror]),
  ];
  if (trusted.length > 0) {
    const config = `[safe]\n${trusted.map((dir) => `\tdirectory = ${dir}\n`).join("")}`;
    // Never through a link the DevBox left in its place: the host's own file would be written.
    const gitconfig = `${relative(request.dir, request.home)}/.gitconfig`;
    await writeFileInside(request.dir, gitconfig, config);
  }
  if (request.uid !== undefined) {
    const owner = `${request.uid}:${request.uid}`;
    await run("chown", ["-R", owner, request.checkout, request.tmp, request.home]);
  }
}

/** The sandboxed agent's environment: the hub socket, the command sandbox and the egress proxy. */
function sandboxedAgentEnv(
  env: Record<string, string>,
  home: string,
  proxy: string,
): Record<string, string> {
  return {
    ...env,
    HOME: home,
    [AGENT_ENV.hubSocket]: HUB_SOCKET_IN_SANDBOX,
    [COMMAND_SANDBOX_ENV]: "bwrap",
    ...proxyEnv(proxy),
  };
}

/**
 * The proxy variables of an agent whose only way out is its gateway to the hub (bubblewrap's
 * and the container executor's network namespaces have nothing else).
 */
export function proxyEnv(proxy: string): Record<string, string> {
  return {
    HTTP_PROXY: proxy,
    HTTPS_PROXY: proxy,
    http_proxy: proxy,
    https_proxy: proxy,
    NO_PROXY: "127.0.0.1,localhost",
    no_proxy: "127.0.0.1,localhost",
  };
}

/**
 * Starts `file` as the agent (or the container engine that runs it), leading its own process
 * group, its output to the log, and writes the token on its stdin.
 */
export async function spawnAgent(
  file: string,
  args: string[],
  env: Record<string, string>,
  request: Pick<LaunchRequest, "checkout" | "logFd" | "token">,
): Promise<ChildProcess> {
  const spawned = spawn(file, args, {
    cwd: request.checkout,
    env,
    detached: true,
    stdio: ["pipe", request.logFd, request.logFd],
  });
  await new Promise<void>((resolve, reject) => {
    spawned.once("spawn", resolve);
    spawned.once("error", (error) =>
      reject(
        new DevBoxError("spawn-failed", `cannot start the DevBox agent: ${error.message}`, {
          cause: error,
        }),
      ),
    );
  });
  // The agent reads its token from stdin; a write to an agent that died at once is no matter.
  spawned.stdin?.on("error", () => {});
  spawned.stdin?.end(`${request.token}\n`);
  return spawned;
}

/** Whether `repository` is a path on this host (not a URL): then it is bound into the sandbox. */
export function isLocalPath(repository: string): boolean {
  return !/^[a-z][a-z0-9+.-]*:\/\//i.test(repository) && !/^[^/]+@[^/]+:/.test(repository);
}
