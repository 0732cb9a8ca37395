import type { IncomingMessage, ServerResponse } from "node:http";
import type { LoadedRun } from "../store/run-repository.js";
import type { RunLinks } from "./build-run-view.js";

/** Someone allowed to see a page, and the token their state-changing requests must carry. */
export interface Viewer {
  login: string;
  csrf: string;
}

/** Whether a request may see a repository's runs; if not, what to tell the person. */
export type Access =
  | { ok: true; viewer: Viewer }
  | { ok: false; status: 401 | 403 | 503; message: string; signIn?: string };

/** An Approve or Reject from a run page. */
export interface PageAnswer {
  viewer: Viewer;
  run: LoadedRun;
  decision: "approved" | "rejected";
  note?: string;
  /** The approval visit the page showed: an answer to an earlier approval answers nothing. */
  visit: number;
  /** The run page's path, the evidence of where the answer was given. */
  pagePath: string;
}

/** What came of an answer: shown beside the buttons. */
export interface AnswerResult {
  ok: boolean;
  status: number;
  message: string;
}

/**
 * What differs between the app's run pages and `clustercode ui`'s: how a repository is named in
 * paths, who may see what, which runs an index lists, links to GitHub, how an approval is
 * answered, and the host's own routes (sign-in).
 */
export interface RunPagesHost {
  /** Path segments naming the repository: 2 (`owner/repo`) on the app, 0 locally. */
  readonly repoSegments: 0 | 2;
  /** Who is asking, and whether they may see the runs of `repo` (undefined locally). */
  access(req: IncomingMessage, repo: string | undefined, returnTo: string): Promise<Access>;
  /** The runs an index lists, newest first. */
  listRuns(repo: string | undefined): Promise<LoadedRun[]>;
  /** Where the run's branch, pull request and last commit are, when the host knows. */
  links(run: LoadedRun): RunLinks;
  /** Applies an answer with the same rules and evidence as the host's other ways of answering. */
  answer(request: PageAnswer): Promise<AnswerResult>;
  /** Where the pages' sign-out form posts, when the host has sessions. */
  readonly signOutPath?: string;
  /** Routes only this host serves; true when it handled the request. */
  routes?(req: IncomingMessage, res: ServerResponse): Promise<boolean>;
}
