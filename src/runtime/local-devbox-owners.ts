import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { isAlive } from "../devbox/local/process-info.js";
import { pidFileOwner, releasePidFile, takePidFile } from "../devbox/local/pid-file.js";
import type { DevBoxOwnership } from "./devbox-leases.js";

/**
 * Which local process owns which DevBox of a state directory: a file per DevBox in
 * `<stateDir>/devbox-owners/` holding the owner's pid, created exclusively. A DevBox is owned for
 * as long as that process lives (the kernel says when it has gone, so there is no lease to
 * renew or wait out): `approve` or `cancel` in another terminal never takes the DevBoxes of the
 * `run` still driving them, and a crashed process's are free at once.
 */
export class LocalDevBoxOwners implements DevBoxOwnership {
  readonly ms = 1000;
  readonly #dir: string;

  constructor(stateDir: string) {
    this.#dir = join(stateDir, "devbox-owners");
  }

  async take(id: string): Promise<boolean> {
    await mkdir(this.#dir, { recursive: true });
    return takePidFile(this.#file(id));
  }

  release(id: string): Promise<void> {
    return releasePidFile(this.#file(id));
  }

  /** Ownership lasts as long as the process: nothing to renew. */
  start(): void {}

  async stop(): Promise<void> {}

  /** Which of the DevBox ids no live process owns (those of a crashed process, to reap). */
  async orphans(ids: string[]): Promise<string[]> {
    const orphaned: string[] = [];
    for (const id of ids) {
      const owner = await pidFileOwner(this.#file(id));
      if (owner === undefined || owner === process.pid || !(await isAlive(owner)))
        orphaned.push(id);
    }
    return orphaned;
  }

  #file(id: string): string {
    return join(this.#dir, encodeURIComponent(id));
  }
}
