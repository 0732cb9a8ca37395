import { execFile, type ChildProcess } from "node:child_process";
import { existsSync, writeSync } from "node:fs";
import { mkdir, readdir, rm } from "node:fs/promises";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import { COMMAND_SANDBOX_ENV } from "../agent/command-sandbox.js";
import { DevBoxError } from "../errors.js";
import type { DevBoxExecutor, StartRequest } from "../executor.js";
import { killGroup } from "../process-runner.js";
import { AGENT_ENV } from "../protocol.js";
import { SingleFlight } from "../single-flight.js";
import { agentEnvironment, passedOn } from "../local/agent-env.js";
import { prepareCheckout } from "../local/clone.js";
import { devBoxPaths, type LocalDevBoxPaths } from "../local/devbox-paths.js";
import { HubRelay } from "../local/hub-relay.js";
import { isLocalPath, prepareSandboxedFiles, proxyEnv, spawnAgent } from "../local/launch.js";
import { mirrorOf } from "../local/mirror.js";
import { appendInside, writeFileInside } from "../local/no-follow.js";
import { waitForExit } from "../local/process-info.js";
import { devboxUid } from "../local/sandbox.js";
import { chooseEngine, type ContainerEngine, type ContainerEngineKind } from "./engine.js";
import { containerRunArgs, type ContainerRun } from "./run-args.js";
import type { Settings } from "../../settings/index.js";

const run = promisify(execFile);

/** How a {@link ContainerExecutor} is set up. */
export interface ContainerExecutorOptions {
  /** DevBoxes live in `<stateDir>/devboxes/<devboxId>/`, as local ones do. */
  stateDir: string;
  /** The runtime's environment: the engine's, and the secrets the spec names are read from it. */
  env: NodeJS.ProcessEnv;
  /** The decoded `CLUSTERCODE_CONTAINER_ENGINE`; unset: the first of docker, podman answering. */
  engine?: ContainerEngineKind | undefined;
  /** The decoded `CLUSTERCODE_CONTAINER_IMAGE`: the DevBox image when the spec names none. */
  image: string;
  /** How long `stop` waits after SIGTERM before removing the container; default 5000 ms. */
  graceMs?: number;
  /** The engine to use, found already (tests); default {@link chooseEngine} on first start. */
  found?: ContainerEngine;
}

const DEVBOX_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
/** The agent in the DevBox image (`images/devbox/Dockerfile` links it there). */
const AGENT_IN_IMAGE = "clustercode";

/**
 * Runs each DevBox's agent in a container of the DevBox image, in Docker or Podman, for hosts
 * without bubblewrap (macOS). The checkout is cloned on the host as for local DevBoxes and bound
 * in; the container has no network and reaches the hub through the same unix-socket relay as a
 * bubblewrap sandbox. The engine's client leads its own process group, its pid in a file.
 */
export class ContainerExecutor implements DevBoxExecutor {
  readonly #options: ContainerExecutorOptions;
  readonly #children = new Map<string, ChildProcess>();
  readonly #relays = new Map<string, HubRelay>();
  readonly #starting = new SingleFlight();
  #engine: ContainerEngine | undefined;

  constructor(options: ContainerExecutorOptions) {
    this.#options = options;
    this.#engine = options.found;
  }

  /** The engine DevBoxes run in; throws a `sandbox-unavailable` DevBoxError naming what is missing. */
  engine(): ContainerEngine {
    this.#engine ??= chooseEngine({ engine: this.#options.engine, path: this.#options.env.PATH });
    return this.#engine;
  }

  /** The files of DevBox `devboxId`. */
  paths(devboxId: string): LocalDevBoxPaths {
    if (!DEVBOX_ID_PATTERN.test(devboxId)) {
      throw new DevBoxError("invalid-request", `"${devboxId}" cannot name a DevBox directory`);
    }
    return devBoxPaths(join(this.#options.stateDir, "devboxes", devboxId));
  }

  /** Clones and starts the container; does nothing when this DevBox is running or starting. */
  start(request: StartRequest): Promise<void> {
    return this.#starting.run(request.devboxId, () => this.#start(request));
  }

  async #start(request: StartRequest): Promise<void> {
    const child = this.#children.get(request.devboxId);
    if (child !== undefined && child.exitCode === null && child.signalCode === null) return;
    const engine = this.engine();
    const paths = this.paths(request.devboxId);
    await mkdir(paths.tmp, { recursive: true, mode: 0o700 });
    await mkdir(paths.home, { recursive: true, mode: 0o700 });
    // Never through a link a DevBox left in the log's place.
    const log = await appendInside(paths.dir, relative(paths.dir, paths.logFile));
    try {
      const say = (line: string) => writeSync(log.fd, `${line}\n`);
      const { stateDir } = this.#options;
      await prepareCheckout(request, paths, { stateDir, say }, passedOn(this.#options.env));
      const mirror = mirrorOf(stateDir, request);
      const asRoot = process.getuid?.() === 0;
      // As root, the DevBox's own uid; else the user's, which owns the files it must write.
      const uid = asRoot ? devboxUid(request.devboxId) : (process.getuid?.() ?? 1000);
      await this.#removeContainer(engine, request.devboxId);
      const files = { ...paths, repository: request.repository };
      await prepareSandboxedFiles({ ...files, ...(asRoot ? { uid } : {}) });
      const relay = await HubRelay.open(
        join(paths.dir, "hub.sock"),
        request.apiUrl,
        asRoot ? uid : undefined,
      );
      this.#relays.set(request.devboxId, relay);
      const env = this.#agentEnv(request, relay.path, say);
      const spec = this.#containerRun(request, engine, { paths, uid, envNames: Object.keys(env) });
      const spawned = await spawnAgent(
        engine.binary,
        containerRunArgs(existsSync(mirror) ? { ...spec, mirror } : spec),
        { ...engineEnv(this.#options.env), ...env },
        { ...paths, logFd: log.fd, token: request.token },
      );
      this.#track(request.devboxId, spawned);
      await writeFileInside(
        paths.dir,
        relative(paths.dir, paths.pidFile),
        `${spawned.pid}\n`,
        0o644,
      );
    } finally {
      await log.close();
    }
  }

  /**
   * The agent's environment in the container, given by name: no host PATH (HOME and TMPDIR are
   * given by value, see {@link ContainerExecutor.#containerRun}), the relay, the proxy.
   */
  #agentEnv(
    request: StartRequest,
    hubSocket: string,
    say: (line: string) => void,
  ): Record<string, string> {
    const env = agentEnvironment(request, this.#options.env, { asRoot: false, warn: say });
    // The host's PATH and HOME name nothing in the image (a Mac's least of all).
    delete env.PATH;
    delete env.HOME;
    const port = new URL(request.apiUrl).port || "80";
    return {
      ...env,
      [AGENT_ENV.isolation]: `container (${this.engine().kind})`,
      [AGENT_ENV.hubSocket]: hubSocket,
      // Commands run as the agent's user: the container, not a nested sandbox, is the wall.
      [COMMAND_SANDBOX_ENV]: "none",
      ...proxyEnv(request.egressProxy ?? `http://127.0.0.1:${port}`),
    };
  }

  /** The container of `request`; HOME and TMPDIR by value: the engine's client has its own. */
  #containerRun(
    request: StartRequest,
    engine: ContainerEngine,
    { paths, uid, envNames }: { paths: LocalDevBoxPaths; uid: number; envNames: string[] },
  ): ContainerRun {
    const { spec, devboxId, apiUrl } = request;
    return {
      engine,
      name: containerName(devboxId),
      devboxId,
      image: spec.image ?? this.#options.image,
      uid,
      devboxDir: paths.dir,
      checkout: paths.checkout,
      ...(isLocalPath(request.repository) ? { localSource: request.repository } : {}),
      envNames,
      envValues: { HOME: paths.home, TMPDIR: paths.tmp },
      cpus: spec.cpu,
      memoryMiB: spec.memoryMiB,
      command: [AGENT_IN_IMAGE, "devbox", "--api", apiUrl, "--devbox", devboxId, "--token-stdin"],
    };
  }

  #track(devboxId: string, spawned: ChildProcess): void {
    this.#children.set(devboxId, spawned);
    spawned.once("exit", () => {
      if (this.#children.get(devboxId) === spawned) this.#children.delete(devboxId);
    });
    spawned.unref();
  }

  /** Stops the agent (SIGTERM through the engine's client), then removes its container. */
  async stop(devboxId: string): Promise<void> {
    await this.#starting.settled(devboxId);
    const paths = this.paths(devboxId);
    const child = this.#children.get(devboxId);
    if (child?.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      // The client passes the signal on to the container's init, which passes it to the agent.
      killGroup(child.pid, "SIGTERM");
      await waitForExit(child.pid, this.#options.graceMs ?? 5000);
    }
    // A container a crashed process left has a pid file; without an engine there is none to remove.
    const engine = existsSync(paths.pidFile) ? this.#engineIfAny() : this.#engine;
    if (engine !== undefined) await this.#removeContainer(engine, devboxId);
    if (child?.pid !== undefined) killGroup(child.pid, "SIGKILL");
    this.#children.delete(devboxId);
    await this.#relays.get(devboxId)?.close();
    this.#relays.delete(devboxId);
    await rm(paths.pidFile, { force: true });
    await rm(paths.tmp, { recursive: true, force: true });
  }

  #engineIfAny(): ContainerEngine | undefined {
    try {
      return this.engine();
    } catch {
      return undefined;
    }
  }

  /** Removes the DevBox's container, running or not; nothing when there is none. */
  async #removeContainer(engine: ContainerEngine, devboxId: string): Promise<void> {
    await run(engine.binary, ["rm", "--force", containerName(devboxId)], {
      env: engineEnv(this.#options.env),
      timeout: 30_000,
    }).catch(() => undefined);
  }

  /** Stops every DevBox this executor started. */
  async stopAll(): Promise<void> {
    await Promise.all([...this.#children.keys()].map((devboxId) => this.stop(devboxId)));
  }

  /** Removes the containers of DevBoxes a crashed process left (a pid file). Returns their ids. */
  async reap(devboxIds?: string[]): Promise<string[]> {
    const reaped: string[] = [];
    for (const devboxId of devboxIds ?? (await this.knownDevBoxIds())) {
      if (this.#children.has(devboxId) || this.#starting.has(devboxId)) continue;
      if (!existsSync(this.paths(devboxId).pidFile)) continue;
      reaped.push(devboxId);
      await this.stop(devboxId);
    }
    return reaped;
  }

  /** The DevBoxes that have a directory in the state directory, running or not. */
  async knownDevBoxIds(): Promise<string[]> {
    const root = join(this.#options.stateDir, "devboxes");
    const names = await readdir(root).catch(() => [] as string[]);
    return names.filter((name) => DEVBOX_ID_PATTERN.test(name));
  }
}

/** The container of DevBox `devboxId`. */
export function containerName(devboxId: string): string {
  return `clustercode-${devboxId}`;
}

/** What the engine's client itself needs of the runtime's environment (its config, its host). */
function engineEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    const wanted = ["PATH", "HOME", "XDG_RUNTIME_DIR", "TMPDIR"].includes(name);
    if (value !== undefined && (wanted || /^(DOCKER|CONTAINER|CONTAINERS)_/.test(name))) {
      kept[name] = value;
    }
  }
  return kept;
}

/** `CLUSTERCODE_EXECUTOR=container`: DevBoxes in Docker or Podman (no warm ones). */
export function containerExecutor(
  stateDir: string,
  env: NodeJS.ProcessEnv,
  devboxes: Settings["devboxes"],
): ContainerExecutor {
  const engine = devboxes.containerEngine;
  return new ContainerExecutor({
    stateDir,
    env,
    image: devboxes.containerImage,
    ...(engine === undefined ? {} : { engine }),
  });
}
