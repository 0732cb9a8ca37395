/**
 * The walls around a local DevBox. Each agent runs under bubblewrap (`bwrap`) in its own PID,
 * mount, IPC, UTS and network namespace, with a clean environment, a root made only of
 * read-only system directories, the node binary and the app's `dist/` + `node_modules`, and its
 * own DevBox directory read-write: it sees none of the app's processes, environment or files.
 *
 * Why bubblewrap and not `unshare` + `setpriv`: bwrap builds the whole new root (binds, a tmpfs
 * /tmp, a fresh /proc and /dev) in one unprivileged step, as an ordinary user through user
 * namespaces, and it works unchanged nested inside itself (the agent runs each command in a
 * nested bwrap). `unshare` would need a mount script run as root inside the namespace and
 * `setpriv` alone hides nothing; we still use `setpriv` where the app is root, to drop to the
 * DevBox's own uid once bwrap (running as root) has built the root.
 */
import { OWN_PID_NAMESPACE } from "../agent/command-sandbox.js";
import { spawnSync } from "node:child_process";
import { accessSync, constants, existsSync, realpathSync } from "node:fs";
import { delimiter, dirname, join, resolve, sep } from "node:path";
import { DevBoxError } from "../errors.js";
import { cliMounts } from "./cli-mounts.js";

/** Set to "1" to run local DevBoxes without isolation (recorded in every run's evidence). */
export const UNSAFE_ENV = "CLUSTERCODE_UNSAFE_LOCAL_DEVBOX";
/** Path of the bwrap binary to use instead of the one on PATH. */
export const BWRAP_ENV = "CLUSTERCODE_BWRAP";
/** Where the hub relay socket appears inside the sandbox. */
export const HUB_SOCKET_IN_SANDBOX = "/run/clustercode/hub.sock";

/** How local DevBoxes are isolated, as the evidence says it. */
export type Isolation =
  | { kind: "bubblewrap"; bwrap: string; label: "bubblewrap" }
  | { kind: "none"; label: `none (${typeof UNSAFE_ENV}=1)` };

/**
 * The host's decoded choice of walls: {@link UNSAFE_ENV} and {@link BWRAP_ENV} (the settings'
 * `devboxes.unsafeLocalDevBox` and `devboxes.bwrap`), and the PATH bwrap is looked for on.
 */
export interface SandboxChoice {
  /** No isolation at all (recorded in every run's evidence). */
  unsafe?: boolean | undefined;
  /** The bwrap binary to use instead of the one on `path`. */
  bwrap?: string | undefined;
  /** Where bwrap is looked for when `bwrap` is unset. */
  path?: string | undefined;
}

const probed = new Map<string, string | undefined>();

/**
 * The isolation local DevBoxes get: bubblewrap, or none when {@link UNSAFE_ENV} is "1". Throws a
 * `sandbox-unavailable` {@link DevBoxError} naming what is missing and how to fix it.
 */
export function chooseIsolation(choice: SandboxChoice, asRoot: boolean): Isolation {
  if (choice.unsafe === true) return { kind: "none", label: `none (${UNSAFE_ENV}=1)` };
  const bwrap = findBwrap(choice);
  const fixes = `or set CLUSTERCODE_EXECUTOR=container to run them in Docker or Podman (macOS), or ${UNSAFE_ENV}=1 to run them without isolation; clustercode doctor checks this machine`;
  if (bwrap === undefined) {
    throw new DevBoxError(
      "sandbox-unavailable",
      `local DevBoxes run under bubblewrap, but bwrap was not found${choice.bwrap === undefined ? " on PATH" : ` at ${BWRAP_ENV}=${choice.bwrap}`}: install bubblewrap (apt-get install bubblewrap), ${fixes}`,
    );
  }
  const problem = probe(bwrap, asRoot);
  if (problem !== undefined) {
    throw new DevBoxError(
      "sandbox-unavailable",
      `bubblewrap cannot create the DevBox's namespaces (${problem}): enable unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces > 0), ${fixes}`,
    );
  }
  return { kind: "bubblewrap", bwrap, label: "bubblewrap" };
}

function findBwrap(choice: SandboxChoice): string | undefined {
  const named = choice.bwrap;
  if (named !== undefined && named !== "") return isExecutable(named) ? named : undefined;
  for (const dir of (choice.path ?? "").split(delimiter)) {
    if (dir === "") continue;
    const candidate = join(dir, "bwrap");
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Runs bwrap once the way DevBoxes use it; the error text when that fails. */
function probe(bwrap: string, asRoot: boolean): string | undefined {
  const key = `${bwrap}\0${asRoot}`;
  if (!probed.has(key)) {
    const args = [
      ...(asRoot ? [] : ["--unshare-user"]),
      "--unshare-pid",
      "--unshare-net",
      "--ro-bind",
      "/",
      "/",
      "--proc",
      "/proc",
      "true",
    ];
    const result = spawnSync(bwrap, args, { encoding: "utf8", timeout: 10_000 });
    probed.set(
      key,
      result.status === 0
        ? undefined
        : (result.stderr.trim() || result.error?.message || `exit ${result.status}`).slice(0, 300),
    );
  }
  return probed.get(key);
}

/** The uid and gid of DevBox `devboxId` when the app runs as root: one of its own, not root's. */
export function devboxUid(devboxId: string): number {
  let hash = 2166136261;
  for (const char of devboxId) hash = Math.imul(hash ^ char.charCodeAt(0), 16777619) >>> 0;
  return 200_000 + (hash % 65_536);
}

/** What the agent's sandbox is built from. */
export interface AgentSandbox {
  bwrap: string;
  /** The DevBox's directory (checkout, tmp, home): the only host directory it may write. */
  devboxDir: string;
  /** The unix socket the executor relays to the hub; appears at {@link HUB_SOCKET_IN_SANDBOX}. */
  hubSocket: string;
  /** The clone source when it is a local path (bound so that fetch and push still work). */
  localSource?: string;
  /** The host's mirror of the repository, bound read-only: a partial checkout's blobs. */
  mirror?: string;
  /** The setup cache: the run branch's directory (writable) and the base branch's (read-only). */
  setupCache?: { writable: string; readOnly: string[] };
  /** The `clustercode` CLI (`<package>/dist/cli/main.js`). */
  cliPath: string;
  /** Directories of PATH to show read-only (where the agent CLIs and tools live). */
  path: string;
  /**
   * The agent CLIs (argv[0]) the run starts, looked up on `path`: what they point to outside
   * PATH's directories is shown too.
   */
  commands?: readonly string[];
  /** Set when the app runs as root: the DevBox's own uid (and gid), dropped to with setpriv. */
  uid?: number;
  /** The environment the agent starts with (bwrap's own is cleared). */
  env: Record<string, string>;
  cwd: string;
}

/** The file and argv that start `command` as the DevBox agent inside its sandbox. */
export function sandboxedAgent(
  sandbox: AgentSandbox,
  command: readonly string[],
): { file: string; args: string[] } {
  const asRoot = sandbox.uid !== undefined;
  const args = [
    ...(asRoot ? [] : ["--unshare-user", "--unshare-pid"]),
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-net",
    "--unshare-cgroup-try",
    "--hostname",
    "devbox",
    "--clearenv",
    ...Object.entries(sandbox.env).flatMap(([name, value]) => ["--setenv", name, value]),
  ];
  const binds: [string, string, string][] = [...readOnlyPaths(sandbox)]
    .sort()
    .map((path) => ["--ro-bind", realpathSync(path), path]);
  // Until git goes through the hub, a clone source that is a local path is bound (writable, as
  // far as its owner allows, for checkpoint pushes); this goes once git fetches over the hub.
  if (sandbox.localSource !== undefined && existsSync(sandbox.localSource)) {
    binds.push(["--bind", realpathSync(sandbox.localSource), sandbox.localSource]);
  }
  if (sandbox.mirror !== undefined && existsSync(sandbox.mirror)) {
    binds.push(["--ro-bind", realpathSync(sandbox.mirror), sandbox.mirror]);
  }
  for (const dir of sandbox.setupCache?.readOnly ?? []) binds.push(["--ro-bind", dir, dir]);
  if (sandbox.setupCache !== undefined) {
    binds.push(["--bind", sandbox.setupCache.writable, sandbox.setupCache.writable]);
  }
  binds.push(["--bind", sandbox.devboxDir, sandbox.devboxDir]);
  binds.push(["--bind", sandbox.hubSocket, HUB_SOCKET_IN_SANDBOX]);
  const links = addAgentClis(sandbox, binds);
  // As root, this bwrap builds the root with root's access to the paths, and a second,
  // unprivileged one (after setpriv) makes the PID namespace and its /proc: the host's /proc is
  // bound only for it to mount over (the kernel lets a user namespace mount a proc only where a
  // full one is visible), and is never reachable by the agent.
  args.push("--perms", "1777", "--tmpfs", "/tmp", "--dev", "/dev");
  args.push(...(asRoot ? ["--bind", "/proc", "/proc"] : ["--proc", "/proc"]));
  args.push("--perms", "0755", "--tmpfs", "/run");
  // bwrap run as root makes the directories above a bind 0700; the DevBox's uid must traverse them.
  const mounted = new Set(["/tmp", "/run"]);
  const made = [...binds.map(([, , to]) => to), ...links.keys()];
  const parents = ancestors(made).filter((dir) => !mounted.has(dir));
  for (const dir of parents) args.push("--perms", "0755", "--dir", dir);
  for (const bind of binds) args.push(...bind);
  for (const [path, target] of links) args.push("--symlink", target, path);
  args.push("--chdir", sandbox.cwd, "--");
  if (asRoot) args.push(...dropToDevBoxUser(String(sandbox.uid)));
  args.push(...command);
  return { file: sandbox.bwrap, args };
}

/**
 * Adds to `binds` what the agent CLIs the run starts need beyond what the sandbox shows (see
 * `cli-mounts.ts`): their packages or install directories, read-only; the symlinks on the way
 * to them, to be recreated.
 */
function addAgentClis(
  sandbox: AgentSandbox,
  binds: [string, string, string][],
): Map<string, string> {
  // The host's own /tmp, /run, /dev and /proc are not shown: only what is bound is there.
  const shown = binds.map(([, , to]) => to);
  const mounts = cliMounts(sandbox.commands ?? [], sandbox.path, shown);
  for (const path of mounts.readOnly) binds.push(["--ro-bind", path, path]);
  return mounts.links;
}

/** The host paths the sandbox shows read-only: system dirs, /etc files, node, the CLI, PATH. */
function readOnlyPaths(sandbox: AgentSandbox): Set<string> {
  const readOnly = new Set<string>();
  for (const dir of ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"]) {
    if (existsSync(dir)) readOnly.add(dir);
  }
  for (const file of ETC_FILES) if (existsSync(file)) readOnly.add(file);
  readOnly.add(installPrefix(process.execPath));
  const packageRoot = resolve(dirname(sandbox.cliPath), "..", "..");
  for (const part of ["dist", "node_modules", "package.json"]) {
    const path = join(packageRoot, part);
    if (existsSync(path)) readOnly.add(path);
  }
  for (const dir of sandbox.path.split(delimiter)) {
    if (dir !== "" && dir.startsWith(sep) && existsSync(dir) && !isTooBroad(dir)) {
      readOnly.add(dir);
    }
  }
  return readOnly;
}

/** The argv prefix that, as root, drops to the DevBox's uid and enters its own PID namespace. */
function dropToDevBoxUser(id: string): string[] {
  return [
    "setpriv",
    `--reuid=${id}`,
    `--regid=${id}`,
    "--clear-groups",
    "--inh-caps=-all",
    "--bounding-set=-all",
    "--no-new-privs",
    "--",
    "bwrap",
    ...OWN_PID_NAMESPACE,
    "--",
  ];
}

/** What of /etc a DevBox needs: names, certificates, git's and the shell's settings. */
const ETC_FILES = [
  "/etc/passwd",
  "/etc/group",
  "/etc/nsswitch.conf",
  "/etc/hosts",
  "/etc/ssl",
  "/etc/ca-certificates",
  "/etc/ca-certificates.conf",
  "/etc/alternatives",
  "/etc/gitconfig",
  "/etc/localtime",
  "/etc/bash.bashrc",
  "/etc/profile",
  "/etc/ld.so.cache",
  "/etc/ld.so.conf",
  "/etc/ld.so.conf.d",
];

/** The directory node was installed into (`/usr` for `/usr/bin/node`, `~/.nvm/.../v20`). */
function installPrefix(execPath: string): string {
  const real = realpathSync(execPath);
  return dirname(dirname(real));
}

/** Every proper ancestor directory of `paths` below `/`, parents first. */
function ancestors(paths: readonly string[]): string[] {
  const found = new Set<string>();
  for (const path of paths) {
    for (let dir = dirname(path); dir !== sep && dir !== "."; dir = dirname(dir)) found.add(dir);
  }
  return [...found].sort((a, b) => a.split(sep).length - b.split(sep).length || a.localeCompare(b));
}

/** Directories that would show the host wholesale: `/`, a home, the state or the app's cwd. */
function isTooBroad(dir: string): boolean {
  const path = resolve(dir);
  return path === sep || path === "/home" || path === "/root" || path === resolve(process.cwd());
}
