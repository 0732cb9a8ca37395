import { CREDENTIALS } from "../../../workflow/secret-literal.js";

/** What a run's DevBox may push, resolved by the runtime for the hub. */
export interface GitPolicy {
  /** The run branch, `clustercode/<issue>-<run>`; its variant branches are allowed too. */
  runBranch: string;
  /**
   * The branch the run starts from: a push is read against it and the ref's current value, so
   * commits the run branch shares with it are not read again. The default branch when absent.
   */
  baseBranch?: string;
  /** The workflow's `devbox.git.allow_workflow_changes`. */
  allowWorkflowChanges: boolean;
}

/** The directory whose files are GitHub Actions workflows. */
export const WORKFLOWS_DIR = ".github/workflows/";

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * Why `ref` may not be pushed, or undefined when it is one of the run's branches: the run branch
 * itself or one of its variant branches (`<run branch>-v<n>`, `<run branch>-race<k>-v<n>`).
 * Tags, the default branch, other runs' branches and every other ref are refused.
 */
export function refRefusal(ref: string, runBranch: string): string | undefined {
  const own = new RegExp(`^refs/heads/${escapeRegExp(runBranch)}(?:-race[0-9]+)?(?:-v[0-9]+)?$`);
  if (own.test(ref)) return undefined;
  if (ref.startsWith("refs/tags/")) return "tags may not be pushed from a DevBox";
  return `only the run's branches (${runBranch} and its variants) may be pushed`;
}

/** Why a push changing `paths` is refused for its workflow files, or undefined. */
export function workflowRefusal(paths: readonly string[], policy: GitPolicy): string | undefined {
  if (policy.allowWorkflowChanges) return undefined;
  const touched = paths.find((path) => path.startsWith(WORKFLOWS_DIR));
  if (touched === undefined) return undefined;
  return `changes ${WORKFLOWS_DIR} (${touched}); the workflow must set devbox.git.allow_workflow_changes`;
}

/**
 * Why `text` (what a push adds: names, commits whole, added lines) is refused, or undefined: it holds
 * one of the run's secret values, or text shaped like a known credential. The reason names
 * the kind, never the value.
 */
export function contentRefusal(text: string, secretValues: readonly string[]): string | undefined {
  // Short values (a port, "true") would refuse innocent pushes and protect nothing.
  if (secretValues.some((value) => value.length >= 8 && text.includes(value))) {
    return "it carries the value of one of the run's secrets";
  }
  for (const { kind, pattern } of CREDENTIALS) {
    if (new RegExp(pattern.source, pattern.flags.replace("g", "")).test(text)) {
      return `it carries what looks like ${kind}`;
    }
  }
  return undefined;
}
