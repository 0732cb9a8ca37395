import { isWorkflowPath } from "../workflow/workflow-paths.js";
import { decodeSegment } from "../ui/run-pages-paths.js";

/** What a path under `/workflows` or `/api/workflows` names. */
export type EditorTarget =
  | { kind: "list"; repo?: string }
  | { kind: "edit"; repo?: string; path: string }
  | { kind: "file"; repo?: string; path: string }
  | { kind: "validate" };

/**
 * Reads what follows `/workflows` (a page: the list, or `<path>/edit`) or `/api/workflows`
 * (JSON: the list, `validate`, or a file); the app's paths start with `owner/repo`. Only
 * workflow files (`.clustercode/workflow.yml`, `.clustercode/workflows/*.yml`) are named.
 */
export function parseEditorTarget(
  rest: string,
  api: boolean,
  repoSegments: 0 | 2,
): EditorTarget | undefined {
  if (api && rest === "/validate") return { kind: "validate" };
  const parts = rest.split("/").filter((segment) => segment !== "");
  const segments = parts.map(decodeSegment);
  if (segments.some((segment) => segment === undefined)) return undefined;
  const names = segments as string[];
  if (names.length < repoSegments) return undefined;
  const scope = repoSegments === 2 ? { repo: names.slice(0, 2).join("/") } : {};
  const file = names.slice(repoSegments);
  if (file.length === 0) return { kind: "list", ...scope };
  if (!api && file.at(-1) !== "edit") return undefined;
  const path = (api ? file : file.slice(0, -1)).join("/");
  if (!isWorkflowPath(path)) return undefined;
  return { kind: api ? "file" : "edit", path, ...scope };
}

/** The page and API paths of a repository's (or the local) workflows. */
export function editorPaths(repo: string | undefined): { list: string; api: string } {
  const scope = repo === undefined ? "" : `/${repo}`;
  return { list: `/workflows${scope}`, api: `/api/workflows${scope}` };
}
