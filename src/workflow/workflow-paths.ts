/** Where a repository keeps its workflows. */

/** The main workflow file and the folder of further workflows. */
export const WORKFLOW_FILE = ".clustercode/workflow.yml";
/** Further workflows live here, one per `*.yml` file. */
export const WORKFLOWS_DIR = ".clustercode/workflows";

/** Is `path` a workflow file (the main file, or a `*.yml` or `*.yaml` in the folder)? */
export function isWorkflowPath(path: string): boolean {
  return path === WORKFLOW_FILE || /^\.clustercode\/workflows\/[^/]+\.ya?ml$/.test(path);
}
