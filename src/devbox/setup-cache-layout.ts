import { createHash } from "node:crypto";

/**
 * A setup cache key (see `setupCacheKey`): 40 hex digits. Anything else never names an entry,
 * so a key can be joined to a directory or an object name as it is.
 */
export const CACHE_KEY_PATTERN = /^[0-9a-f]{40}$/;

/** The file naming the archive of entry `key` in a directory of the cache. */
export function pointerName(key: string): string {
  return `${key}.sha256`;
}

/** The archive of entry `key` whose bytes hash to `sha256`: a name of its own per content. */
export function archiveName(key: string, sha256: string): string {
  return `${key}-${sha256.slice(0, 16)}.tar`;
}

/** A pointer's text: `<sha256>  <archive>`, as sha256sum writes it. */
export function pointerText(sha256: string, archive: string): string {
  return `${sha256}  ${archive}\n`;
}

/**
 * What a pointer says: the archive's checksum and name, or undefined when it is not a pointer
 * (a name that is not an archive of this layout could point outside its directory).
 */
export function parsePointer(text: string): { sha256: string; archive: string } | undefined {
  const [sha256, archive] = text.trim().split(/\s+/);
  if (sha256 === undefined || !/^[0-9a-f]{64}$/.test(sha256)) return undefined;
  if (archive === undefined || !/^[0-9a-f]{40}-[0-9a-f]{16}\.tar$/.test(archive)) return undefined;
  return { sha256, archive };
}

/**
 * `branch-<hash>`: the name of `branch`'s scope in a repository's cache, the same on a host's
 * disk and in the bucket. Hashed, so that no branch name can reach another directory.
 */
export function branchScope(branch: string): string {
  return `branch-${createHash("sha256").update(branch).digest("hex").slice(0, 24)}`;
}
