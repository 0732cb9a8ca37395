import { resolve } from "node:path";
import { findGitRoot } from "../workflow/find-workflows.js";
import { UsageError } from "./command.js";

/**
 * The repository whose runs a command reads: `--repo`, else the one `cwd` is in; outside one, a
 * usage error ending with `hint` (what else to give).
 */
export async function repositoryOf(
  cwd: string,
  option: string | undefined,
  hint = "give --repo DIR",
): Promise<string> {
  if (option !== undefined) return resolve(cwd, option);
  const root = await findGitRoot(cwd);
  if (root === undefined) throw new UsageError(`${cwd} is not inside a git repository: ${hint}`);
  return root;
}
