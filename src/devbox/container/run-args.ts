import { DevBoxError } from "../errors.js";
import type { ContainerEngine } from "./engine.js";

/** vCPUs and MiB when the workflow's `devbox` names none: the ECS executor's defaults. */
export const DEFAULT_CPUS = 1;
export const DEFAULT_MEMORY_MIB = 2048;
/** The most processes a DevBox container may hold (a fork bomb stops there). */
export const PIDS_LIMIT = 1024;

/** What one DevBox container is made of. */
export interface ContainerRun {
  engine: ContainerEngine;
  /** The container's name, `clustercode-<devboxId>`: how a later process finds it to remove. */
  name: string;
  devboxId: string;
  image: string;
  /** The DevBox's own uid and gid (never 0). */
  uid: number;
  /** The DevBox's directory (checkout, tmp, home, the hub relay's socket), bound at its path. */
  devboxDir: string;
  /** The agent's working directory, the checkout. */
  checkout: string;
  /** The host's mirror, bound read-only at its path: a partial checkout's blobs. */
  mirror?: string;
  /** The clone source when it is a local path, bound at its path (checkpoint pushes). */
  localSource?: string;
  /** The setup cache: the run branch's directory (writable), the base branch's (read-only). */
  setupCache?: { writable: string; readOnly: string[] };
  /** The names of the agent's variables; their values are in the engine's own environment. */
  envNames: string[];
  /** Variables given with their values (paths, no secrets), where the engine's client has its own. */
  envValues: Record<string, string>;
  cpus?: number | undefined;
  memoryMiB?: number | undefined;
  /** The agent's command line, run instead of the image's entrypoint. */
  command: readonly string[];
}

/**
 * The engine's argv (after the binary) that runs a DevBox's agent with the ECS task's walls: its
 * own non-root user, no capabilities and no way to gain any, a read-only root with only the
 * DevBox's directory (and a tmpfs /tmp) writable, bounded processes, memory and CPU, and no
 * network at all: the hub is reached over the relay's unix socket in the DevBox's directory,
 * as under bubblewrap. Variables are passed by name (`-e NAME`), so no value is in any argv.
 */
export function containerRunArgs(run: ContainerRun): string[] {
  const id = `${run.uid}:${run.uid}`;
  return [
    "run",
    "--rm",
    "--interactive",
    "--init",
    "--name",
    run.name,
    "--label",
    `clustercode.devbox=${run.devboxId}`,
    "--hostname",
    "devbox",
    "--user",
    id,
    // Rootless podman maps the host's uid to root in the container; keep-id keeps it the user's.
    ...(run.engine.rootless ? ["--userns", "keep-id"] : []),
    "--read-only",
    "--cap-drop",
    "ALL",
    "--security-opt",
    "no-new-privileges",
    "--pids-limit",
    String(PIDS_LIMIT),
    "--memory",
    `${run.memoryMiB ?? DEFAULT_MEMORY_MIB}m`,
    "--cpus",
    String(run.cpus ?? DEFAULT_CPUS),
    "--network",
    "none",
    "--tmpfs",
    "/tmp:rw,nosuid,nodev,mode=1777",
    ...mounts(run).flatMap((mount) => ["--mount", mount]),
    "--workdir",
    run.checkout,
    ...run.envNames.flatMap((name) => ["--env", name]),
    ...Object.entries(run.envValues).flatMap(([name, value]) => ["--env", `${name}=${value}`]),
    "--entrypoint",
    run.command[0] ?? "clustercode",
    run.image,
    ...run.command.slice(1),
  ];
}

/** The bind mounts, each `type=bind,src=…,dst=…[,readonly]`, at the same path as on the host. */
function mounts(run: ContainerRun): string[] {
  const binds: [string, boolean][] = [];
  if (run.localSource !== undefined) binds.push([run.localSource, false]);
  if (run.mirror !== undefined) binds.push([run.mirror, true]);
  for (const dir of run.setupCache?.readOnly ?? []) binds.push([dir, true]);
  if (run.setupCache !== undefined) binds.push([run.setupCache.writable, false]);
  binds.push([run.devboxDir, false]);
  return binds.map(([path, readOnly]) => {
    // A comma would end the path and start another option of the mount.
    if (path.includes(",")) {
      throw new DevBoxError("invalid-request", `cannot mount ${path} into a DevBox container`);
    }
    return `type=bind,src=${path},dst=${path}${readOnly ? ",readonly" : ""}`;
  });
}
