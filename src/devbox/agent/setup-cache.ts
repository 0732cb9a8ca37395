import { createHash, randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { lstat, readFile, rename, rm, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { cachePathProblem } from "../../workflow/cache-path.js";
import { OutputTail } from "../output-tail.js";
import { archiveName, parsePointer, pointerName, pointerText } from "../setup-cache-layout.js";
import { runProcess } from "../process-runner.js";
import { AGENT_GIT_ARGS, agentGitEnv } from "./repository-config.js";

/** One `devbox.cache` entry: `paths` of the checkout, saved under the hash of the `key` files. */
export interface SetupCacheEntry {
  /** Files of the checkout whose contents make the key (a lockfile, say). */
  key: string[];
  /** Directories or files of the checkout that setup makes and the cache keeps. */
  paths: string[];
}

/** The setup cache of one DevBox: its entries and where they are kept. */
export interface SetupCacheSettings {
  entries: SetupCacheEntry[];
  /**
   * Directories entries are looked up in, in order (the run branch's, then the base branch's);
   * saves go to the first, the only one a DevBox may write.
   */
  dirs: string[];
}

/** The variable setup commands read: "true" when every cache entry was restored. */
export const CACHE_HIT_ENV = "CLUSTERCODE_CACHE_HIT";

/** Where the cache works and what it tells. */
export interface CacheContext {
  cwd: string;
  env: Record<string, string>;
  signal: AbortSignal;
  /** Writes a line to the agent's log. */
  say: (line: string) => void;
}

/**
 * The key of `entry`: a hash of its key files' contents (a missing or non-regular file counts as
 * missing), of the setup commands and of the entry's paths, so that changing any of them misses.
 */
export async function setupCacheKey(
  cwd: string,
  entry: SetupCacheEntry,
  setup: readonly string[],
): Promise<string> {
  const hash = createHash("sha256");
  hash.update(JSON.stringify({ version: 1, setup, paths: entry.paths, key: entry.key }));
  for (const name of entry.key) {
    const path = join(cwd, name);
    // A symlink could name anything of the DevBox's; only the checkout's own files count.
    const info = await lstat(path).catch(() => undefined);
    const content = info?.isFile() === true ? await readFile(path) : undefined;
    hash.update(`\0${name}\0${content === undefined ? "-" : `${content.length}:`}`);
    if (content !== undefined) hash.update(content);
  }
  return hash.digest("hex").slice(0, 40);
}

/** What a restore found: the key of each entry and whether it was restored. */
export interface RestoreOutcome {
  keys: string[];
  hits: boolean[];
}

/**
 * Restores each entry whose key is in one of the cache's directories into the checkout,
 * replacing what its paths held. An entry that does not match its checksum or does not unpack
 * is ignored (its paths are cleared) and counts as a miss; nothing here fails the setup.
 */
export async function restoreSetupCache(
  context: CacheContext,
  cache: SetupCacheSettings,
  setup: readonly string[],
): Promise<RestoreOutcome> {
  const keys: string[] = [];
  const hits: boolean[] = [];
  for (const entry of cache.entries) {
    const key = await setupCacheKey(context.cwd, entry, setup);
    keys.push(key);
    hits.push(await restoreEntry(context, cache.dirs, entry, key));
  }
  return { keys, hits };
}

async function restoreEntry(
  context: CacheContext,
  dirs: string[],
  entry: SetupCacheEntry,
  key: string,
): Promise<boolean> {
  for (const [index, dir] of dirs.entries()) {
    const text = await readFile(join(dir, pointerName(key)), "utf8").catch(() => undefined);
    if (text === undefined) continue;
    const pointer = parsePointer(text);
    const archive = join(dir, pointer?.archive ?? "");
    if (pointer === undefined || !(await unpackArchive(context, entry, archive, pointer.sha256))) {
      context.say(`setup cache: entry ${key} is missing or damaged, ignored`);
      // Only the DevBox's own directory is writable; a damaged entry there is dropped.
      if (index === 0) await rm(join(dir, pointerName(key)), { force: true }).catch(() => {});
      continue;
    }
    // The entry's time is its last use: the host evicts the least recently used first.
    const now = new Date();
    await utimes(archive, now, now).catch(() => {});
    context.say(`setup cache: restored ${entry.paths.join(", ")} (${key})`);
    return true;
  }
  context.say(`setup cache: no entry for ${entry.paths.join(", ")} (${key})`);
  return false;
}

/**
 * Unpacks `archive` into the checkout when its bytes hash to `sha256`, replacing what the
 * entry's paths held (a symlink there is removed, not followed). Whether it did: a damaged
 * archive, or one that does not unpack, leaves the paths cleared.
 */
export async function unpackArchive(
  context: CacheContext,
  entry: SetupCacheEntry,
  archive: string,
  sha256: string,
): Promise<boolean> {
  const actual = await fileSha256(archive).catch(() => undefined);
  // The archive is data of the cache's, not code anyone approved: it may hold only the entry's
  // declared paths, and never a file the checkout tracks.
  const problem = actual === sha256 ? await archiveProblem(context, entry, archive) : undefined;
  if (problem !== undefined) context.say(`setup cache: refused: ${problem}`);
  const sound = actual === sha256 && problem === undefined;
  if (sound) await clearPaths(context.cwd, entry.paths);
  const members = sound ? ["--", ...entry.paths] : [];
  const unpacked = sound && (await tar(context, ["-xf", archive, "-C", context.cwd, ...members]));
  if (!unpacked) await clearPaths(context.cwd, entry.paths);
  return unpacked;
}

/**
 * Packs the entry's paths that exist into a tar at `file`. The paths packed (none: nothing was
 * written), or undefined when tar failed.
 */
export async function packPaths(
  context: CacheContext,
  entry: SetupCacheEntry,
  file: string,
): Promise<string[] | undefined> {
  const present: string[] = [];
  for (const path of entry.paths) {
    if ((await lstat(join(context.cwd, path)).catch(() => undefined)) !== undefined) {
      present.push(path);
    }
  }
  if (present.length === 0) return present;
  const packed = await tar(context, ["-cf", file, "-C", context.cwd, "--", ...present]);
  return packed ? present : undefined;
}

/**
 * Saves each entry that missed: its paths (those that exist) in a tar written beside the
 * destination and renamed into place, with its checksum, so a reader sees a whole entry or none.
 */
export async function saveSetupCache(
  context: CacheContext,
  cache: SetupCacheSettings,
  outcome: RestoreOutcome,
): Promise<void> {
  const dir = cache.dirs[0];
  if (dir === undefined) return;
  for (const [index, entry] of cache.entries.entries()) {
    const key = outcome.keys[index];
    if (key === undefined || outcome.hits[index] === true) continue;
    const temporary = join(dir, `.${key}.${randomBytes(6).toString("hex")}.tmp`);
    try {
      const present = await packPaths(context, entry, temporary);
      if (present?.length === 0) continue;
      if (present === undefined) {
        context.say(`setup cache: could not save ${entry.paths.join(", ")}`);
        continue;
      }
      // The archive gets a name of its own first, then the pointer names it: a reader sees
      // the old entry or the new one, whole.
      const sha = await fileSha256(temporary);
      const name = archiveName(key, sha);
      await rename(temporary, join(dir, name));
      await writeFile(`${temporary}.sha256`, pointerText(sha, name));
      await rename(`${temporary}.sha256`, join(dir, pointerName(key)));
      context.say(`setup cache: saved ${present.join(", ")} (${key})`);
    } catch (error) {
      const paths = entry.paths.join(", ");
      context.say(`setup cache: could not save ${paths}: ${(error as Error).message}`);
    } finally {
      await rm(temporary, { force: true });
      await rm(`${temporary}.sha256`, { force: true });
    }
  }
}

/**
 * What is wrong with unpacking `archive` for `entry`, or undefined: a member outside the entry's
 * paths (or climbing out with `..`), or one that is a file the checkout tracks.
 */
async function archiveProblem(
  context: CacheContext,
  entry: SetupCacheEntry,
  archive: string,
): Promise<string | undefined> {
  const listed = await capture(context, "tar", ["-tf", archive]);
  if (listed === undefined) return "the archive cannot be listed";
  const members = listed
    .split("\n")
    .filter((line) => line !== "")
    .map((name) => name.replace(/^(\.\/)+/, "").replace(/\/+$/, ""));
  const inside = (name: string) =>
    entry.paths.some((path) => name === path || name.startsWith(`${path}/`));
  const outside = members.find((name) => name.split("/").includes("..") || !inside(name));
  if (outside !== undefined) return `${outside} is not under ${entry.paths.join(", ")}`;
  const tracked = await capture(context, "git", [
    ...AGENT_GIT_ARGS,
    "ls-files",
    "-z",
    "--",
    ...entry.paths,
  ]);
  if (tracked === undefined) return "the checkout's tracked files cannot be listed";
  const trackedFiles = new Set(tracked.split("\0").filter((name) => name !== ""));
  const overwritten = members.find((name) => trackedFiles.has(name));
  return overwritten === undefined ? undefined : `${overwritten} is a tracked file`;
}

/** The standard output of `file` (never through a shell), or undefined when it failed. */
async function capture(
  context: CacheContext,
  file: string,
  args: string[],
): Promise<string | undefined> {
  // A listing too long to keep whole cannot be checked whole: it counts as a failure.
  const stdout = new OutputTail(64 * 1024 * 1024);
  const { exitCode } = await runProcess({
    file,
    args,
    cwd: context.cwd,
    env: file === "git" ? { ...context.env, ...(await agentGitEnv()) } : context.env,
    signal: context.signal,
    output: new OutputTail(4096),
    stdout,
  });
  return exitCode === 0 && !stdout.truncated ? stdout.text() : undefined;
}

/** Runs tar (never through a shell); whether it succeeded. */
async function tar(context: CacheContext, args: string[]): Promise<boolean> {
  const { exitCode } = await runProcess({
    file: "tar",
    args,
    cwd: context.cwd,
    env: context.env,
    signal: context.signal,
    output: new OutputTail(4096),
  });
  return exitCode === 0;
}

async function clearPaths(cwd: string, paths: readonly string[]): Promise<void> {
  for (const path of paths) await rm(join(cwd, path), { recursive: true, force: true });
}

/** The sha256 of a file's bytes, in hex. */
export async function fileSha256(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/**
 * The setup cache from the agent's environment (`CLUSTERCODE_SETUP_CACHE`, a JSON array of
 * `{ key, paths }`, and its directories); undefined when there is none; an Error naming what is
 * wrong. Paths are checked again here: the agent must never unpack or pack outside the checkout.
 */
export function parseSetupCache(
  json: string | undefined,
  dirs: string[],
): SetupCacheSettings | undefined | Error {
  if (json === undefined || json === "") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return new Error("CLUSTERCODE_SETUP_CACHE is not JSON");
  }
  const parsed = z
    .array(z.strictObject({ key: z.array(z.string()).min(1), paths: z.array(z.string()).min(1) }))
    .safeParse(value);
  if (!parsed.success) return new Error("CLUSTERCODE_SETUP_CACHE must be [{ key, paths }]");
  for (const entry of parsed.data) {
    for (const path of [...entry.key, ...entry.paths]) {
      const problem = cachePathProblem(path);
      if (problem !== undefined) return new Error(`CLUSTERCODE_SETUP_CACHE: ${problem}`);
    }
  }
  return { entries: parsed.data, dirs };
}
