import type { GitHubAuth } from "../client/github.js";

/**
 * The app's GitHub clients, which Probot hands over once it has loaded the app: parts built
 * before then (installations, redelivery) ask here when they need them.
 */
export class AuthSlot {
  #auth: GitHubAuth | undefined;

  /** Gives the app its clients. */
  set(auth: GitHubAuth): void {
    this.#auth = auth;
  }

  /** The clients, if given yet. */
  peek(): GitHubAuth | undefined {
    return this.#auth;
  }

  /** The clients; a programmer error before {@link set}. */
  get(): GitHubAuth {
    if (this.#auth === undefined)
      throw new Error("programmer error: the app has not attached GitHub auth");
    return this.#auth;
  }
}
