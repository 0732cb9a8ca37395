import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";
import { DevBoxError } from "../errors.js";

/** Where a command was found, or where it was looked for in vain. */
export type CommandLookup =
  | { found: string }
  | { missing: { command: string; searched: string[] } }
  /** A path relative to the checkout (`./agent.sh`): the repository's own, found at run time. */
  | { inCheckout: string };

/**
 * Looks `command` up as a DevBox will: a bare name in each absolute directory of `path` (a PATH
 * value) in turn, as execvp does; an absolute path as it is. The first executable regular file
 * (through any symlinks) wins.
 */
export function lookUpCommand(command: string, path: string): CommandLookup {
  if (isAbsolute(command)) {
    return isExecutableFile(command) ? { found: command } : { missing: { command, searched: [] } };
  }
  if (command.includes("/")) return { inCheckout: command };
  // Relative PATH entries would name directories of the checkout, not the host's.
  const searched = searchPath(path);
  for (const dir of searched) {
    const candidate = join(dir, command);
    if (isExecutableFile(candidate)) return { found: candidate };
  }
  return { missing: { command, searched } };
}

/** The absolute directories of a PATH value, in order, without repeats. */
export function searchPath(path: string): string[] {
  return [...new Set(path.split(delimiter).filter((dir) => isAbsolute(dir)))];
}

/** What to tell the user about a command that is not there: what was looked for, and where. */
export function missingMessage(missing: { command: string; searched: string[] }): string {
  if (missing.searched.length === 0 && isAbsolute(missing.command)) {
    return `agent CLI ${missing.command} is not an executable file on this host`;
  }
  const where =
    missing.searched.length === 0 ? "PATH is empty" : `PATH: ${missing.searched.join(":")}`;
  return `agent CLI "${missing.command}" was not found on this host's PATH (searched ${where}): install it there (see docs/local-runs.md), or put its directory on PATH`;
}

/**
 * Where each of `commands` is on the host, refusing the DevBox with a `spawn-failed`
 * {@link DevBoxError} that names the first one missing and the PATH searched.
 */
export function requireCommands(commands: readonly string[], path: string): string[] {
  const found: string[] = [];
  for (const command of commands) {
    const lookup = lookUpCommand(command, path);
    if ("missing" in lookup) throw new DevBoxError("spawn-failed", missingMessage(lookup.missing));
    if ("found" in lookup) found.push(lookup.found);
  }
  return found;
}

function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
