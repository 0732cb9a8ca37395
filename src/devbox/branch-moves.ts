/**
 * Where the app says that a repository's default branch moved (a push it heard of), for the
 * warm DevBoxes made at its old head to be made again.
 */
export class DefaultBranchMoves {
  readonly #listeners = new Set<(repo: string) => void>();

  /** Calls `listener` with the repository (`owner/name`) of every move from now on. */
  listen(listener: (repo: string) => void): void {
    this.#listeners.add(listener);
  }

  /** Says that the default branch of `repo` (`owner/name`) moved. */
  moved(repo: string): void {
    for (const listener of this.#listeners) listener(repo);
  }
}
