import { parseWorkflow, type ParseResult } from "../../workflow/parse.js";
import { isWorkflowPath, WORKFLOW_FILE, WORKFLOWS_DIR } from "../../workflow/workflow-paths.js";
import { callGitHub, isNotFound } from "./errors.js";
import type { GitHub, RepoRef } from "./github.js";

/** One workflow file read from a branch, with its blob SHA (which a run pins) and its parse. */
export interface WorkflowFile {
  path: string;
  sha: string;
  text: string;
  parsed: ParseResult;
}

/**
 * Reads every workflow of a repository from `ref` (default: its default branch): the main file
 * and `.clustercode/workflows/*.yml`. Missing files are simply absent from the result.
 */
export async function readWorkflows(
  gh: GitHub,
  repo: RepoRef,
  ref = repo.defaultBranch,
): Promise<WorkflowFile[]> {
  const files: WorkflowFile[] = [];
  const main = await readWorkflowFile(gh, repo, WORKFLOW_FILE, ref);
  if (main !== undefined) files.push(main);
  const listing = await callGitHub(`list ${WORKFLOWS_DIR}`, () =>
    gh.request("GET /repos/{owner}/{repo}/contents/{path}", {
      owner: repo.owner,
      repo: repo.repo,
      path: WORKFLOWS_DIR,
      ref,
    }),
  ).catch((error: unknown) => {
    if (isNotFound(error)) return undefined;
    throw error;
  });
  const entries = Array.isArray(listing?.data) ? listing.data : [];
  for (const entry of entries) {
    if (entry.type !== "file" || !isWorkflowPath(entry.path)) continue;
    const file = await readWorkflowFile(gh, repo, entry.path, ref);
    if (file !== undefined) files.push(file);
  }
  return files;
}

/** Reads and parses one workflow file at `ref`; undefined when it does not exist there. */
export async function readWorkflowFile(
  gh: GitHub,
  repo: Pick<RepoRef, "owner" | "repo">,
  path: string,
  ref: string,
): Promise<WorkflowFile | undefined> {
  try {
    const { data } = await callGitHub(`read ${path}@${ref}`, () =>
      gh.request("GET /repos/{owner}/{repo}/contents/{path}", {
        owner: repo.owner,
        repo: repo.repo,
        path,
        ref,
      }),
    );
    if (Array.isArray(data) || data.type !== "file" || !("content" in data)) return undefined;
    const text = Buffer.from(data.content, "base64").toString("utf8");
    return { path, sha: data.sha, text, parsed: parseWorkflow(text) };
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}
