import { LocalHost, type LocalHostOptions } from "../runtime/local-host.js";
import { StateDirHolder } from "../store/state-dir-holder.js";
import { StoreError } from "../store/store-error.js";
import { busyMessage } from "./busy-state-dir.js";
import { NothingToDoError } from "./command.js";

/** How long a command waits for a directory held by a process that left no note (a reader). */
const READER_WAIT_MS = 3000;

/**
 * Opens the local host for CLI command `command`. A state directory another live process holds
 * is a one-line usage error naming the directory and the run holding it, with what to do; one
 * that a `status` or `log` holds for a moment is waited for.
 */
export async function openLocalHost(
  command: string,
  options: Omit<LocalHostOptions, "command">,
): Promise<LocalHost> {
  for (let waited = 0; ; waited += 100) {
    try {
      return await LocalHost.open({ ...options, command });
    } catch (error) {
      if (!(error instanceof StoreError && error.code === "state_dir_locked")) throw error;
      if (StateDirHolder.read(options.stateDir) !== undefined || waited >= READER_WAIT_MS) {
        throw new NothingToDoError(busyMessage(options.stateDir));
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
