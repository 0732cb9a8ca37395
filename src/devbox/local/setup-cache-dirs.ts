import { chmod, mkdir, readdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { repositoryKey } from "./mirror.js";
import { branchScope } from "../setup-cache-layout.js";

/**
 * `<stateDir>/cache/<owner>/<repo>/<branch scope>`: where the setup cache of `repository` keeps
 * the entries saved by runs on `branch`. As with GitHub Actions' caches, a run reads its own
 * branch's entries, then its base branch's, and writes only its own branch's: a run on a pull
 * request's branch cannot plant an entry that the default branch's runs would restore.
 */
export function setupCacheDir(stateDir: string, repository: string, branch: string): string {
  return join(stateDir, "cache", repositoryKey(repository), branchScope(branch));
}

/** The directories a DevBox looks its cache up in: its run branch's (writable), then its base's. */
export async function prepareSetupCacheDirs(
  stateDir: string,
  repository: string,
  branches: { branch: string; baseBranch: string },
  ownerUid: number | undefined,
): Promise<{ writable: string; readOnly: string[] }> {
  const writable = setupCacheDir(stateDir, repository, branches.branch);
  const base = setupCacheDir(stateDir, repository, branches.baseBranch);
  for (const dir of [writable, base]) await mkdir(dir, { recursive: true });
  // Each DevBox has its own uid when the app is root; every DevBox of the branch saves here.
  if (ownerUid !== undefined) await chmod(writable, 0o777);
  return { writable, readOnly: base === writable ? [] : [base] };
}

/** An archive of the setup cache: its path, size and when it was last used. */
interface Archive {
  path: string;
  bytes: number;
  usedMs: number;
}

/**
 * Removes the least recently used archives of `<stateDir>/cache` (restores touch theirs) until
 * they add up to at most `maxBytes`, and the pointers and leftovers that name none. Returns the
 * bytes freed.
 */
export async function evictSetupCache(stateDir: string, maxBytes: number): Promise<number> {
  const archives: Archive[] = [];
  await collect(join(stateDir, "cache"), 0, archives);
  let total = archives.reduce((sum, archive) => sum + archive.bytes, 0);
  let freed = 0;
  for (const archive of archives.sort((a, b) => a.usedMs - b.usedMs)) {
    if (total <= maxBytes) break;
    await rm(archive.path, { force: true });
    total -= archive.bytes;
    freed += archive.bytes;
  }
  return freed;
}

/** Finds the archives under `dir` (owner, repo, scope: three levels down). */
async function collect(dir: string, depth: number, into: Archive[]): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory() && depth < 3) await collect(path, depth + 1, into);
    else if (entry.isFile() && depth === 3 && entry.name.endsWith(".tar")) {
      const info = await stat(path).catch(() => undefined);
      if (info !== undefined) into.push({ path, bytes: info.size, usedMs: info.mtimeMs });
    } else if (entry.isFile() && depth === 3 && entry.name.endsWith(".tmp")) {
      // A save that died half-way; one under way is younger than an hour.
      const info = await stat(path).catch(() => undefined);
      if (info !== undefined && Date.now() - info.mtimeMs > 3_600_000)
        await rm(path, { force: true });
    }
  }
}
