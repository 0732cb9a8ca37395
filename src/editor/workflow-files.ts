/** Where the canvas put each node, kept beside the workflow rather than in it. */
export type NodePositions = Record<string, { x: number; y: number }>;

/** A workflow file as the editor opens it. */
export interface OpenedWorkflow {
  path: string;
  /** The file's text; a new workflow's skeleton when it does not exist yet. */
  yaml: string;
  /** What the file was when read (a content hash, or GitHub's blob SHA): saving compares it. */
  version: string;
  exists: boolean;
  positions: NodePositions;
}

/** A save the editor asks for. */
export interface SaveRequest {
  repo: string | undefined;
  path: string;
  yaml: string;
  /** The version the editor opened; the save is refused when the file has moved on since. */
  version: string;
  positions: NodePositions;
  /** Who saves (the signed-in user on the app). */
  viewer: { login: string };
}

/** What came of a save: the new version, or why not. */
export type SaveResult =
  | { ok: true; version: string; message: string; pullRequest?: string }
  | { ok: false; status: 403 | 409 | 503; message: string };

/**
 * The workflow files the editor reads and saves: the working tree locally, the repository
 * through the app's installation (a save opens a pull request) on the app.
 */
export interface WorkflowFiles {
  /** `file` writes the working tree; `pull-request` proposes the change. */
  readonly saves: "file" | "pull-request";
  /** The repository's workflow paths. */
  list(repo: string | undefined): Promise<string[]>;
  open(repo: string | undefined, path: string): Promise<OpenedWorkflow>;
  save(request: SaveRequest): Promise<SaveResult>;
}
