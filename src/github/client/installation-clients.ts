import { LruMap } from "../../memory/lru-map.js";
import type { GitHub, GitHubAuth } from "./github.js";

/** How many installations keep their client; a client forgotten is made again when needed. */
const MAX_CLIENTS = 100;

/**
 * One Octokit per installation, kept, instead of a new one at every call: Probot's
 * `app.auth(id)` builds a client with all its plugins and REST methods each time, which made a
 * restart's resync of 1,000 runs allocate about 12 MB of clients. A kept client renews its own
 * installation token (auth-app's hook does, per request). Bounded: the least recently used
 * installations beyond `max` are forgotten; a client that failed to be made is not kept.
 */
export class InstallationClients implements GitHubAuth {
  readonly #clients: LruMap<number, Promise<GitHub>>;

  constructor(
    private readonly auth: GitHubAuth,
    max = MAX_CLIENTS,
  ) {
    this.#clients = new LruMap(max);
  }

  /** The client of installation `installationId`, made once while it is remembered. */
  installation(installationId: number): Promise<GitHub> {
    const known = this.#clients.get(installationId);
    if (known !== undefined) return known;
    const made = this.auth.installation(installationId);
    this.#clients.set(installationId, made);
    made.catch(() => {
      if (this.#clients.get(installationId) === made) this.#clients.delete(installationId);
    });
    return made;
  }

  /** The client authenticated as the app (Probot keeps that one itself). */
  app(): Promise<GitHub> {
    return this.auth.app();
  }

  /** How many installations have a client kept. */
  get size(): number {
    return this.#clients.size;
  }
}
