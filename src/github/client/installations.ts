import { RepoTokens, type RepoToken } from "../../devbox/hub/repo-token.js";
import { createRepoToken } from "./mint-repo-token.js";
import { callGitHub } from "./errors.js";
import { splitFullName, type GitHub, type GitHubAuth } from "./github.js";

/**
 * Finds the installation client for a repository: remembered from the deliveries this process
 * saw, otherwise looked up once with the app's JWT (after a restart).
 */
export class Installations {
  readonly #byRepo = new Map<string, number>();
  readonly #tokens: RepoTokens;
  #botLogin: Promise<string> | undefined;

  constructor(private readonly auth: () => GitHubAuth) {
    this.#tokens = new RepoTokens({
      mint: async (repo) => createRepoToken(await this.auth().app(), await this.idOf(repo), repo),
    });
  }

  /** Notes that `repo` (owner/name) is served by installation `id`. */
  remember(repo: string, id: number): void {
    this.#byRepo.set(repo, id);
  }

  /** An Octokit for `repo` (owner/name), authenticated as its installation. */
  async client(repo: string): Promise<GitHub> {
    return this.auth().installation(await this.idOf(repo));
  }

  /** The installation id serving `repo`. */
  async idOf(repo: string): Promise<number> {
    const known = this.#byRepo.get(repo);
    if (known !== undefined) return known;
    const app = await this.auth().app();
    const { data } = await callGitHub(`installation of ${repo}`, () =>
      app.request("GET /repos/{owner}/{repo}/installation", splitFullName(repo)),
    );
    this.#byRepo.set(repo, data.id);
    return data.id;
  }

  /**
   * The app's own bot login, `<app-slug>[bot]`: the author of every comment and issue the app
   * writes, read once from `GET /app` (as the app). Only what this login wrote is adopted as
   * the app's own: another app's bot, or a person, may copy a marker or a title.
   */
  botLogin(): Promise<string> {
    this.#botLogin ??= (async () => {
      const app = await this.auth().app();
      const { data } = await callGitHub("read the app's identity", () => app.request("GET /app"));
      if (data?.slug === undefined) throw new Error("programmer error: GET /app gave no slug");
      return `${data.slug}[bot]`;
    })();
    // A failed read is tried again on the next call, not remembered.
    this.#botLogin.catch(() => (this.#botLogin = undefined));
    return this.#botLogin;
  }

  /**
   * A token for a DevBox's clone and pushes: narrowed to `repo` alone with `contents: write`
   * only, cached until it nears expiry.
   */
  repoToken(repo: string): Promise<RepoToken> {
    return this.#tokens.tokenFor(repo);
  }
}
