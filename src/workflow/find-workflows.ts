import { readdir, stat } from "node:fs/promises";
import { dirname, join, relative } from "node:path";

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

/** The nearest directory at or above `cwd` that holds `.git` (a repository's root), if any. */
export async function findGitRoot(cwd: string): Promise<string | undefined> {
  for (let dir = cwd; ; dir = dirname(dir)) {
    if (await exists(join(dir, ".git"))) return dir;
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * Where a command run in `cwd` finds `.clustercode/`: `cwd` itself, or the nearest parent that
 * has one, up to the repository's root (so `validate` works from any subdirectory, as git does).
 */
export async function findWorkflowRoot(cwd: string): Promise<string | undefined> {
  const top = await findGitRoot(cwd);
  for (let dir = cwd; ; dir = dirname(dir)) {
    if (await exists(join(dir, ".clustercode"))) return dir;
    if (dir === top || dirname(dir) === dir) return undefined;
  }
}

/**
 * `.clustercode/workflow.yml` and `.clustercode/workflows/*.yml` of the repository `cwd` is in,
 * as paths relative to `cwd`.
 */
export async function discoverWorkflows(cwd: string): Promise<string[]> {
  const root = await findWorkflowRoot(cwd);
  if (root === undefined) return [];
  const found: string[] = [];
  const main = join(root, ".clustercode", "workflow.yml");
  if (await exists(main)) found.push(relative(cwd, main));
  const folder = join(root, ".clustercode", "workflows");
  const entries = await readdir(folder).catch(() => [] as string[]);
  for (const entry of entries.sort()) {
    if (entry.endsWith(".yml") || entry.endsWith(".yaml"))
      found.push(relative(cwd, join(folder, entry)));
  }
  return found;
}
