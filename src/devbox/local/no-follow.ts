import { constants, existsSync } from "node:fs";
import { lstat, mkdir, open, rm, unlink, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { DevBoxError } from "../errors.js";

/*
 * The host's only way into a DevBox's directory. Whatever ran in the DevBox (a warm setup, a
 * command, an agent talked into it) could write there, so every name in it may be a symbolic
 * link to a host file, or a directory replaced by one: the host must never follow one. Paths
 * are opened one component at a time, each with O_NOFOLLOW, through `/proc/self/fd/<dir>/`, so
 * that no component can be swapped for a link between a check and the open (as openat would).
 */

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_APPEND, O_NOFOLLOW, O_DIRECTORY, O_NONBLOCK } =
  constants;

/** Whether `/proc/self/fd` lets a path go on from an open directory (Linux). */
const PROC_FD = existsSync("/proc/self/fd");

/** The components of `relative`; throws on an absolute path, `..`, `.` or an empty one. */
function components(relative: string): string[] {
  const parts = relative.split("/");
  if (relative.startsWith("/") || parts.some((part) => ["", ".", ".."].includes(part))) {
    throw new DevBoxError("invalid-request", `"${relative}" is not a path inside a DevBox`);
  }
  return parts;
}

function refused(dir: string, relative: string, cause: unknown): DevBoxError {
  return new DevBoxError(
    "unsafe-path",
    `${join(dir, relative)} is not a plain file of the DevBox (a link, or under one): refused`,
    { cause },
  );
}

/**
 * Opens `relative` inside `dir` (a directory the host made) with `flags`, following no link on
 * the way, and only when it is a regular file (a FIFO would block, a device is not the DevBox's).
 * Throws a DevBoxError `unsafe-path` for a link, ENOENT as it is when a name is missing.
 */
export async function openInside(
  dir: string,
  relative: string,
  flags: number,
  mode = 0o600,
): Promise<FileHandle> {
  const parts = components(relative);
  const name = parts.pop() as string;
  let parent = await open(dir, O_RDONLY | O_DIRECTORY);
  try {
    let at = dir;
    for (const part of parts) {
      const next = await open(via(parent, at, part), O_RDONLY | O_DIRECTORY | O_NOFOLLOW).catch(
        (error: unknown) => rethrow(error, dir, relative),
      );
      await parent.close();
      parent = next;
      at = join(at, part);
    }
    const path = via(parent, at, name);
    const file = await open(path, flags | O_NOFOLLOW | O_NONBLOCK, mode).catch((error: unknown) =>
      rethrow(error, dir, relative),
    );
    if (!(await file.stat()).isFile()) {
      await file.close();
      throw refused(dir, relative, undefined);
    }
    return file;
  } finally {
    await parent.close();
  }
}

/** The path of `name` in the open directory `parent` (at `at`), resolved through its descriptor. */
function via(parent: FileHandle, at: string, name: string): string {
  return PROC_FD ? `/proc/self/fd/${parent.fd}/${name}` : join(at, name);
}

function rethrow(error: unknown, dir: string, relative: string): never {
  const code = (error as NodeJS.ErrnoException).code;
  // O_NOFOLLOW answers ELOOP for a link, O_DIRECTORY ENOTDIR for a link to a file.
  if (code === "ELOOP" || code === "ENOTDIR") throw refused(dir, relative, error);
  throw error;
}

/**
 * Writes `data` as the whole of `relative` inside `dir`: whatever had that name (a link, a hard
 * link to another file) is removed first and a new file created, so nothing is written through.
 */
export async function writeFileInside(
  dir: string,
  relative: string,
  data: string,
  mode = 0o600,
): Promise<void> {
  await removeInside(dir, relative);
  const file = await openInside(dir, relative, O_WRONLY | O_CREAT | O_EXCL, mode);
  try {
    await file.writeFile(data);
  } finally {
    await file.close();
  }
}

/** Opens `relative` inside `dir` to append to it, created when missing (see {@link openInside}). */
export function appendInside(dir: string, relative: string, mode = 0o600): Promise<FileHandle> {
  return openInside(dir, relative, O_WRONLY | O_APPEND | O_CREAT, mode);
}

/** The text of `relative` inside `dir`; undefined when it is missing or not a plain file. */
export async function readInside(dir: string, relative: string): Promise<string | undefined> {
  let file: FileHandle;
  try {
    file = await openInside(dir, relative, O_RDONLY);
  } catch (error) {
    if (error instanceof DevBoxError || (error as NodeJS.ErrnoException).code === "ENOENT")
      return undefined;
    throw error;
  }
  try {
    return await file.readFile("utf8");
  } finally {
    await file.close();
  }
}

/**
 * Removes the name `relative` inside `dir` (a link itself, never what it names) when its parents
 * are plain directories; nothing when it is missing.
 */
export async function removeInside(dir: string, relative: string): Promise<void> {
  const parts = components(relative);
  const name = parts.pop() as string;
  if (parts.length > 0) await assertDirectoriesInside(dir, parts.join("/"));
  const path = join(dir, ...parts, name);
  const info = await lstat(path).catch(() => undefined);
  if (info === undefined) return;
  if (info.isDirectory()) await rm(path, { recursive: true, force: true });
  else await unlink(path);
}

/** Throws `unsafe-path` unless every component of `relative` in `dir` is a plain directory. */
export async function assertDirectoriesInside(dir: string, relative: string): Promise<void> {
  let at = dir;
  for (const part of components(relative)) {
    at = join(at, part);
    const info = await lstat(at);
    if (!info.isDirectory()) throw refused(dir, relative, undefined);
  }
}

/**
 * Makes `name` in `dir` a plain directory of its own: anything else of that name (a link to a
 * host directory, a file) is removed first. Used for the DevBox's TMPDIR and HOME.
 */
export async function ownDirectory(dir: string, name: string, mode: number): Promise<void> {
  const path = join(dir, ...components(name));
  const info = await lstat(path).catch(() => undefined);
  if (info?.isDirectory() === true) return;
  if (info !== undefined) await rm(path, { force: true });
  await mkdir(path, { mode });
}

/** Whether every component of `relative` in `dir` is plain: directories, then a regular file. */
export async function isPlainFileInside(dir: string, relative: string): Promise<boolean> {
  const parts = components(relative);
  const name = parts.pop() as string;
  try {
    if (parts.length > 0) await assertDirectoriesInside(dir, parts.join("/"));
    return (await lstat(join(dir, ...parts, name))).isFile();
  } catch {
    return false;
  }
}
