/**
 * What of an agent CLI installed on the host a DevBox's sandbox must show for the CLI to run
 * there. Agents are installed as users install them: `npm install -g` under a prefix (a link in
 * `<prefix>/bin` to `<prefix>/lib/node_modules/<package>/…`), the native installer (a link in
 * `~/.local/bin` to `~/.local/share/claude/versions/<v>`), a node version manager's prefix. The
 * sandbox shows PATH's directories, so the link is there, but not where it points to.
 */
import { closeSync, lstatSync, openSync, readFileSync, readSync, readlinkSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, join, resolve, sep } from "node:path";
import { DevBoxError } from "../errors.js";
import { lookUpCommand } from "./command-lookup.js";

/** What the sandbox adds for the agent CLIs: directories and files, and symlinks to recreate. */
export interface CliMounts {
  /** Host paths (real, without symlinks) shown read-only at the same path. */
  readOnly: string[];
  /** Symlinks on the way to a CLI outside what the sandbox shows: path → its target. */
  links: Map<string, string>;
}

/** How deep symlinks may chain before the lookup gives up, as the kernel's ELOOP. */
const MAX_LINKS = 40;

/**
 * The mounts that make each of `commands` (found on `path`, as the DevBox will look) run in a
 * sandbox that already shows `shown` (the destinations of its binds): the CLI's npm package or
 * install directory, the symlinks leading to it, and the interpreter its `#!` line names. A
 * command that is missing is left to the caller (see `requireCommands`).
 */
export function cliMounts(
  commands: readonly string[],
  path: string,
  shown: readonly string[],
): CliMounts {
  const bound = shown.map((dir) => resolve(dir));
  const mounts: CliMounts = { readOnly: [], links: new Map() };
  const visible = (candidate: string) =>
    bound.some((root) => candidate === root || candidate.startsWith(root + sep)) ||
    mounts.readOnly.some((root) => candidate === root || candidate.startsWith(root + sep));
  const add = (command: string, depth: number) => {
    const lookup = lookUpCommand(command, path);
    if (!("found" in lookup)) return;
    const file = follow(lookup.found, bound, mounts.links);
    if (!visible(file)) mounts.readOnly.push(installOf(file));
    const interpreter = depth === 0 ? interpreterOf(file) : undefined;
    if (interpreter !== undefined) add(interpreter, depth + 1);
  };
  for (const command of commands) add(command, 0);
  return mounts;
}

/**
 * Follows `path` through its symlinks as the sandbox will: a component at or under a bound
 * directory is seen as on the host (a bind's destination is a directory there even when the
 * host's path is a symlink), a symlink outside them is recorded in `links` to be recreated, and
 * a relative target resolves against the directory the sandbox sees the link in. The final path.
 */
function follow(path: string, bound: readonly string[], links: Map<string, string>): string {
  let parts = path.split(sep).filter((part) => part !== "");
  let current: string = sep;
  for (let hops = 0; parts.length > 0;) {
    const next = join(current, parts[0] ?? "");
    parts = parts.slice(1);
    if (bound.includes(next) || !isSymlink(next)) {
      current = next;
      continue;
    }
    if (++hops > MAX_LINKS) {
      throw new DevBoxError("spawn-failed", `too many symlinks on the way to ${path}`);
    }
    const target = readlinkSync(next);
    const under = bound.some((root) => next.startsWith(root + sep));
    if (!under) links.set(next, target);
    parts = [
      ...resolve(current, target)
        .split(sep)
        .filter((part) => part !== ""),
      ...parts,
    ];
    current = sep;
  }
  return current;
}

function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/**
 * What to show of the CLI's file `file` (a real path): its npm package (`…/node_modules/<name>`
 * or `@scope/<name>`, with the packages nested in it), the version directory of an installer
 * that keeps `versions/<v>/`, a node's prefix, the package whose `bin` names it, else the file
 * alone. Never a directory that would show a home directory or the host wholesale.
 */
export function installOf(file: string): string {
  const parts = file.split(sep);
  const modules = parts.indexOf("node_modules");
  if (modules !== -1) {
    const end = modules + ((parts[modules + 1] ?? "").startsWith("@") ? 3 : 2);
    if (end < parts.length) return parts.slice(0, end).join(sep);
  }
  // A node binary in `<prefix>/bin` (an nvm version): its prefix, with its own modules.
  if (basename(file) === "node" && basename(dirname(file)) === "bin") {
    const prefix = dirname(dirname(file));
    if (!tooBroad(prefix)) return prefix;
  }
  const versions = parts.lastIndexOf("versions");
  if (versions !== -1 && versions + 2 < parts.length) return parts.slice(0, versions + 2).join(sep);
  return packageNaming(file) ?? file;
}

/** The nearest directory above `file` whose package.json's `bin` names it, not too broad. */
function packageNaming(file: string): string | undefined {
  for (let dir = dirname(file); !tooBroad(dir); dir = dirname(dir)) {
    let bin: unknown;
    try {
      bin = (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { bin?: unknown }).bin;
    } catch {
      continue;
    }
    const named = typeof bin === "string" ? [bin] : Object.values(bin ?? {});
    if (named.some((entry) => typeof entry === "string" && resolve(dir, entry) === file)) {
      return dir;
    }
    return undefined;
  }
  return undefined;
}

/**
 * Directories never bound for a CLI: `/`, a top-level directory, `/home`, a home directory
 * (`/root`, `/home/<user>`, this user's) and anything above it.
 */
export function tooBroad(dir: string): boolean {
  const path = resolve(dir);
  if (path.split(sep).filter((part) => part !== "").length <= 1) return true;
  if (dirname(path) === "/home") return true;
  const home = homedir();
  return home !== "" && (home === path || home.startsWith(path + sep));
}

/**
 * The command a script's `#!` line runs it with: `node` for `#!/usr/bin/env node`, the path for
 * `#!/usr/local/bin/node`; undefined for a binary or a script without one.
 */
export function interpreterOf(file: string): string | undefined {
  const head = Buffer.alloc(256);
  let read = 0;
  try {
    const fd = openSync(file, "r");
    try {
      read = readSync(fd, head, 0, head.length, 0);
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
  const text = head.subarray(0, read).toString("utf8");
  if (!text.startsWith("#!")) return undefined;
  const words = (text.slice(2).split("\n")[0] ?? "").trim().split(/\s+/);
  const [program = "", ...rest] = words;
  if (basename(program) !== "env") return program === "" ? undefined : program;
  // `env -S node --flag` and `env node`: the first word that is not an option of env's own.
  return rest.find((word) => !word.startsWith("-") && !word.includes("="));
}
