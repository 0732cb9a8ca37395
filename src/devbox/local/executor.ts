import type { ChildProcess } from "node:child_process";
import { existsSync, writeSync } from "node:fs";
import { mkdir, readdir, rm } from "node:fs/promises";
import { basename, join, relative, sep } from "node:path";
import { readRunningCommand } from "../agent/command-journal.js";
import { DevBoxError } from "../errors.js";
import { SingleFlight } from "../single-flight.js";
import type { DevBoxExecutor, StartRequest } from "../executor.js";
import { commandLineOf, isAlive, waitForExit, workingDirectoryOf } from "./process-info.js";
import { killGroup } from "../process-runner.js";
import { defaultCliPath } from "./cli-path.js";
import { agentEnvironment, passedOn } from "./agent-env.js";
import { prepareCheckout } from "./clone.js";
import { launchAgent } from "./launch.js";
import { requireCommands } from "./command-lookup.js";
import type { HubRelay } from "./hub-relay.js";
import { chooseIsolation, devboxUid, type Isolation, type SandboxChoice } from "./sandbox.js";
import { inheritedEnvironment } from "../../settings/process-environment.js";
import { AGENT_ENV } from "../protocol.js";
import { mirrorOf } from "./mirror.js";
import { evictSetupCache, prepareSetupCacheDirs } from "./setup-cache-dirs.js";
import { WarmPool, type WarmSource } from "./warm-pool.js";
import type { DefaultBranchMoves } from "../branch-moves.js";
import type { WarmDemand } from "../warm-demand.js";
import { devBoxPaths, type LocalDevBoxPaths } from "./devbox-paths.js";
import { runWarmSetup } from "./warm-setup.js";
import { appendInside, ownDirectory, readInside, writeFileInside } from "./no-follow.js";

export type { LocalDevBoxPaths } from "./devbox-paths.js";

/** How a {@link LocalExecutor} is set up. */
export interface LocalExecutorOptions {
  /** DevBoxes live in `<stateDir>/devboxes/<devboxId>/`. */
  stateDir: string;
  /**
   * The runtime's environment: PATH, HOME and LANG are passed on, secrets named in the
   * spec are copied from it, and so are the agent's timings (`CLUSTERCODE_DEVBOX_*_MS`).
   */
  env?: NodeJS.ProcessEnv;
  /**
   * The host's decoded walls (`CLUSTERCODE_UNSAFE_LOCAL_DEVBOX`, `CLUSTERCODE_BWRAP`); default
   * bubblewrap from the PATH of `env`.
   */
  sandbox?: Omit<SandboxChoice, "path">;
  /** The `clustercode` CLI to run; default the built `dist/cli/main.js`. */
  cliPath?: string;
  /** How long `stop` waits after SIGTERM before SIGKILL; default 5000 ms. */
  graceMs?: number;
  /** The user id DevBoxes run as (they run as this process); default `process.getuid()`. */
  uid?: number;
  /**
   * Warm DevBoxes (`devbox.warm`): at most `max` over every repository, cloned from `source`.
   * Unset or `max` 0: every claim clones.
   */
  warm?: {
    max: number;
    source: WarmSource;
    /** Pushes to default branches, which make the warm DevBoxes of their repository again. */
    moves?: DefaultBranchMoves;
    /** What the default branches' workflows ask for: pools filled before their first claim. */
    demand?: WarmDemand;
    onError?: (error: unknown) => void;
  };
  /**
   * How large the setup cache may grow, in bytes, before it is trimmed (the host's decoded
   * `CLUSTERCODE_SETUP_CACHE_MAX_MB`); default {@link DEFAULT_SETUP_CACHE_MAX_BYTES}.
   */
  setupCacheMaxBytes?: number;
  /**
   * Whether checkouts are blobless clones from the host's mirror (default true); false: plain
   * full clones, as before mirrors (the benchmark's baseline).
   */
  partialClones?: boolean;
  /**
   * How long after a fetch of a repository's mirror a claim clones from it without fetching it
   * again (default 30 s; 0: every claim fetches it, as the benchmark's `--fresh-mirror`).
   */
  mirrorFreshMs?: number;
}

/** The setup cache's limit when the host names none: the settings' default, 5120 MiB. */
export const DEFAULT_SETUP_CACHE_MAX_BYTES = 5120 * 1024 * 1024;

const DEVBOX_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/**
 * Runs each DevBox as a child process (`clustercode devbox`) in a fresh clone under the state
 * directory, with a minimal environment, inside a bubblewrap sandbox (see `sandbox.ts`) unless
 * `CLUSTERCODE_UNSAFE_LOCAL_DEVBOX=1`. The child leads its own process group and its pid is
 * kept in a file, so a later process can reap DevBoxes a crashed one left behind.
 */
export class LocalExecutor implements DevBoxExecutor {
  readonly #options: LocalExecutorOptions;
  readonly #env: NodeJS.ProcessEnv;
  readonly #cliPath: string;
  readonly #children = new Map<string, ChildProcess>();
  readonly #starting = new SingleFlight();
  readonly #relays = new Map<string, HubRelay>();
  #isolation: Isolation | undefined;
  readonly #pool: WarmPool | undefined;

  constructor(options: LocalExecutorOptions) {
    this.#options = options;
    this.#env = options.env ?? inheritedEnvironment();
    this.#cliPath = options.cliPath ?? defaultCliPath();
    this.#pool = this.#warmPool();
  }

  /** The pool of warm DevBoxes, when the options ask for one. */
  #warmPool(): WarmPool | undefined {
    const { warm, stateDir } = this.#options;
    if (warm === undefined || warm.max === 0) return undefined;
    const env = passedOn(this.#env);
    const pool = new WarmPool({
      stateDir,
      max: warm.max,
      source: warm.source,
      env,
      paths: (dir) => devBoxPaths(dir),
      setUp: (paths, setup, mirror, signal) => {
        const asRoot = process.getuid?.() === 0;
        const uid = asRoot ? { uid: devboxUid(basename(paths.dir)) } : {};
        const isolation = this.isolation();
        const options = { isolation, cliPath: this.#cliPath, env, mirror, ...uid };
        return runWarmSetup(paths, setup, signal, options);
      },
      ...(warm.onError === undefined ? {} : { onError: warm.onError }),
    });
    warm.moves?.listen((repo) => pool.baseMoved(repo));
    warm.demand?.listen((repo, specs) => pool.declare(repo, specs));
    return pool;
  }

  /** The warm DevBoxes, when kept (see {@link LocalExecutorOptions.warm}). */
  get warm(): WarmPool | undefined {
    return this.#pool;
  }

  /** The files of DevBox `devboxId`. */
  paths(devboxId: string): LocalDevBoxPaths {
    if (!DEVBOX_ID_PATTERN.test(devboxId)) {
      throw new DevBoxError("invalid-request", `"${devboxId}" cannot name a DevBox directory`);
    }
    return devBoxPaths(join(this.#options.stateDir, "devboxes", devboxId));
  }

  /** Clones and launches; does nothing when this DevBox is already running or starting. */
  async start(request: StartRequest): Promise<void> {
    return this.#starting.run(request.devboxId, () => this.#start(request));
  }

  async #start(request: StartRequest): Promise<void> {
    const paths = this.paths(request.devboxId);
    const child = this.#children.get(request.devboxId);
    if (child !== undefined && child.exitCode === null && child.signalCode === null) return;
    if ((await this.#livePid(request.devboxId)) !== undefined) return;

    const isolation = this.isolation();
    // An agent CLI that is not installed fails the claim, before a clone, saying where it looked.
    const commands = request.spec.harnesses ?? [];
    requireCommands(commands, passedOn(this.#env).PATH ?? "");
    // A warm DevBox's directory becomes this one's: the clone and its setup are there already.
    if (!existsSync(paths.dir)) await this.#pool?.claim(request, paths.dir);
    await mkdir(paths.dir, { recursive: true });
    // Every name in the directory may be a link to a host file a warm setup or an earlier agent
    // left there: the host makes its own directories and opens its files without following one.
    await ownDirectory(paths.dir, relative(paths.dir, paths.tmp), 0o700);
    const log = await appendInside(paths.dir, relative(paths.dir, paths.logFile));
    try {
      await this.#prepareCheckout(request, paths, (line) => writeLine(log.fd, line));
      const uid = process.getuid?.() === 0 ? devboxUid(request.devboxId) : undefined;
      const cache = await this.#setupCache(request, uid);
      const mirror = mirrorOf(this.#options.stateDir, request);
      const { child: spawned, relay } = await launchAgent({
        isolation,
        devboxId: request.devboxId,
        apiUrl: request.apiUrl,
        token: request.token,
        ...paths,
        repository: request.repository,
        ...(existsSync(mirror) ? { mirror } : {}),
        ...(cache === undefined ? {} : { setupCache: cache }),
        cliPath: this.#cliPath,
        commands,
        ...(request.egressProxy === undefined ? {} : { egressProxy: request.egressProxy }),
        env: {
          ...agentEnvironment(request, this.#env, {
            asRoot: (this.#options.uid ?? process.getuid?.()) === 0,
            warn: (line) => writeLine(log.fd, line),
          }),
          ...(cache === undefined ? {} : cache.env),
        },
        ...(uid === undefined ? {} : { uid }),
        logFd: log.fd,
      });
      if (relay !== undefined) this.#relays.set(request.devboxId, relay);
      const pid = spawned.pid as number;
      this.#children.set(request.devboxId, spawned);
      spawned.once("exit", () => {
        if (this.#children.get(request.devboxId) === spawned)
          this.#children.delete(request.devboxId);
      });
      spawned.unref();
      await writeFileInside(paths.dir, relative(paths.dir, paths.pidFile), `${pid}\n`, 0o644);
    } finally {
      await log.close();
    }
  }

  /** Clones the checkout, or points the one an earlier process left at this hub. */
  async #prepareCheckout(
    request: StartRequest,
    paths: LocalDevBoxPaths,
    say: (line: string) => void,
  ): Promise<void> {
    const { partialClones, stateDir, mirrorFreshMs } = this.#options;
    const fresh = mirrorFreshMs === undefined ? {} : { mirrorFreshMs };
    const mirrors = partialClones === false ? {} : { stateDir, ...fresh };
    await prepareCheckout(request, paths, { ...mirrors, say }, passedOn(this.#env));
  }

  /**
   * The DevBox's setup cache: its directories (made, and the whole cache trimmed to its limit
   * first) and the agent's settings for them; undefined when the workflow caches nothing.
   */
  async #setupCache(
    request: StartRequest,
    uid: number | undefined,
  ): Promise<{ writable: string; readOnly: string[]; env: Record<string, string> } | undefined> {
    const entries = request.spec.cache ?? [];
    if (entries.length === 0) return undefined;
    const { stateDir } = this.#options;
    const maxBytes = this.#options.setupCacheMaxBytes ?? DEFAULT_SETUP_CACHE_MAX_BYTES;
    await evictSetupCache(stateDir, maxBytes);
    const dirs = await prepareSetupCacheDirs(stateDir, request.repository, request.spec, uid);
    const env = {
      [AGENT_ENV.setupCache]: JSON.stringify(entries),
      [AGENT_ENV.setupCacheDirs]: JSON.stringify([dirs.writable, ...dirs.readOnly]),
    };
    return { ...dirs, env };
  }

  /** Stops the agent (SIGTERM, then SIGKILL after the grace) and any command it left running. */
  async stop(devboxId: string): Promise<void> {
    // A failed start was reported to its caller; stopping only needs it to be over.
    await this.#starting.settled(devboxId);
    const paths = this.paths(devboxId);
    const child = this.#children.get(devboxId);
    const running = child !== undefined && child.exitCode === null && child.signalCode === null;
    const pid = running ? child.pid : await this.#livePid(devboxId);
    if (pid !== undefined) {
      killGroup(pid, "SIGTERM");
      if (!(await waitForExit(pid, this.#options.graceMs ?? 5000))) {
        killGroup(pid, "SIGKILL");
        await waitForExit(pid, 2000);
      }
    }
    this.#children.delete(devboxId);
    await this.#relays.get(devboxId)?.close();
    this.#relays.delete(devboxId);
    // A sandboxed agent's commands die with its PID namespace, and the pid its journal holds is
    // one of that namespace, not of this host.
    if (this.#options.sandbox?.unsafe === true) await this.#killLeftoverCommand(paths);
    await rm(paths.pidFile, { force: true });
    await rm(paths.tmp, { recursive: true, force: true });
  }

  /**
   * How DevBoxes are isolated here (bubblewrap, or none when `CLUSTERCODE_UNSAFE_LOCAL_DEVBOX=1`);
   * throws a `sandbox-unavailable` DevBoxError that says what is missing.
   */
  isolation(): Isolation {
    const choice = { ...this.#options.sandbox, path: this.#env.PATH };
    this.#isolation ??= chooseIsolation(choice, process.getuid?.() === 0);
    return this.#isolation;
  }

  /** Stops every DevBox this executor started, and the warm ones waiting for a claim. */
  async stopAll(): Promise<void> {
    await Promise.all([
      ...[...this.#children.keys()].map((devboxId) => this.stop(devboxId)),
      this.#pool?.close(),
    ]);
  }

  /**
   * Stops DevBoxes a previous, crashed process left running (a pid file whose process is alive
   * and is our agent for that id) and their leftover commands. Returns the ids it stopped.
   */
  async reap(devboxIds?: string[]): Promise<string[]> {
    const ids = devboxIds ?? (await this.knownDevBoxIds());
    const reaped: string[] = [];
    for (const devboxId of ids) {
      if (this.#children.has(devboxId) || this.#starting.has(devboxId)) continue;
      const paths = this.paths(devboxId);
      if (!existsSync(paths.pidFile)) continue;
      if ((await this.#livePid(devboxId)) !== undefined) reaped.push(devboxId);
      await this.stop(devboxId);
    }
    return reaped;
  }

  /** The pid in the DevBox's pid file when that process is alive and is our agent for that id. */
  async #livePid(devboxId: string): Promise<number | undefined> {
    const { dir, pidFile } = this.paths(devboxId);
    const text = existsSync(dir) ? await readInside(dir, relative(dir, pidFile)) : undefined;
    if (text === undefined) return undefined;
    const pid = Number(text.trim());
    if (!Number.isInteger(pid) || pid <= 0 || !(await isAlive(pid))) return undefined;
    const args = await commandLineOf(pid);
    const at = args?.indexOf("--devbox") ?? -1;
    return args?.includes("devbox") === true && at >= 0 && args[at + 1] === devboxId
      ? pid
      : undefined;
  }

  /** Kills the process group of a command whose agent died without killing it. */
  async #killLeftoverCommand(paths: LocalDevBoxPaths): Promise<void> {
    const gitDir = join(paths.checkout, ".git");
    if (!existsSync(gitDir)) return;
    const running = await readRunningCommand(gitDir);
    if (running === undefined || !(await isAlive(running.pid))) return;
    // Where the platform tells, make sure the pid was not reused by someone else's process.
    const cwd = await workingDirectoryOf(running.pid);
    if (cwd !== undefined && cwd !== paths.checkout && !cwd.startsWith(paths.checkout + sep))
      return;
    killGroup(running.pid, "SIGKILL");
    await waitForExit(running.pid, 2000);
  }

  /** The DevBoxes that have a directory in the state directory, running or not. */
  async knownDevBoxIds(): Promise<string[]> {
    try {
      return (await readdir(join(this.#options.stateDir, "devboxes"))).filter((name) =>
        DEVBOX_ID_PATTERN.test(name),
      );
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw error;
    }
  }
}

function writeLine(fd: number, text: string): void {
  // Synchronous so the line lands before the agent's own output in the same file.
  writeSync(fd, `${text}\n`);
}
