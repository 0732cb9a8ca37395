import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { isAlive } from "../devbox/local/process-info.js";
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
    const file = this.#file(id);
    // Twice at most: once more after clearing the file of an owner that died.
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await writeFile(file, `${process.pid}\n`, { flag: "wx", mode: 0o600 });
        return true;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
      const owner = await this.#ownerOf(id);
      if (owner === process.pid) return true;
      if (owner !== undefined && (await isAlive(owner))) return false;
      await rm(file, { force: true });
    }
    return false;
  }

  async release(id: string): Promise<void> {
    if ((await this.#ownerOf(id)) === process.pid) await rm(this.#file(id), { force: true });
  }

  /** Ownership lasts as long as the process: nothing to renew. */
  start(): void {}

  async stop(): Promise<void> {}

  /** Which of the DevBox ids no live process owns (those of a crashed process, to reap). */
  async orphans(ids: string[]): Promise<string[]> {
    const orphaned: string[] = [];
    for (const id of ids) {
      const owner = await this.#ownerOf(id);
      if (owner === undefined || owner === process.pid || !(await isAlive(owner)))
        orphaned.push(id);
    }
    return orphaned;
  }

  async #ownerOf(id: string): Promise<number | undefined> {
    const text = await readFile(this.#file(id), "utf8").catch(() => "");
    const pid = Number(text.trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  }

  #file(id: string): string {
    return join(this.#dir, encodeURIComponent(id));
  }
}
