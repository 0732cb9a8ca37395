import { GitDiffSource, type DiffRequest, type DiffSource } from "../../agents/diff-source.js";

/** Where the app fetches a repository from: a clone URL and the secret it carries, if any. */
export interface FetchSource {
  url: string;
  /** Kept out of error messages (the installation token inside the URL). */
  secret?: string;
}

/**
 * The app's judges' diffs. The app's DevBoxes push run branches to the GitHub repository, so
 * the app fetches the base and run branches from there, with a fresh installation token in
 * the clone URL DevBoxes use, and diffs them with git. Unlike GitHub's compare API this costs
 * no call against the installation's REST budget, is not cut at 300 files, works for an ECS
 * DevBox (which needs no checkout of the app's) and gives a judge the same `base...head` text
 * as a local run.
 */
export class RepositoryDiffSource implements DiffSource {
  constructor(
    /** The fetch source of `repo` (owner/name, as the store names a run's repository). */
    private readonly sourceOf: (repo: string) => Promise<FetchSource>,
    private readonly git: DiffSource = new GitDiffSource(),
  ) {}

  async diff(request: DiffRequest): Promise<string> {
    const source = await this.sourceOf(request.repository);
    try {
      return await this.git.diff({ ...request, repository: source.url });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const scrubbed = [source.url, source.secret ?? ""]
        .filter((text) => text !== "")
        .reduce((text, secret) => text.split(secret).join(request.repository), message);
      throw new Error(scrubbed, { cause: error });
    }
  }
}
