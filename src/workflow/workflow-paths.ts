/** The main workflow file and the folder of further workflows. */
export const WORKFLOW_FILE = ".clustercode/workflow.yml";
/** Further workflows live here, one per `*.yml` file. */
export const WORKFLOWS_DIR = ".clustercode/workflows";

/** Is `path` a workflow file the app reads (and the editor edits)? */
export function isWorkflowPath(path: string): boolean {
  return path === WORKFLOW_FILE || /^\.clustercode\/workflows\/[^/]+\.ya?ml$/.test(path);
}
