import { LocalHost, type LocalHostOptions } from "../runtime/local-host.js";
import { StateDirHolder } from "../store/state-dir-holder.js";
import { StoreError } from "../store/store-error.js";
import { UsageError } from "./command.js";

/**
 * Opens the local host for CLI command `command`. A state directory another live process holds
 * is a one-line usage error naming the directory and the run holding it, with what to do.
 */
export async function openLocalHost(
  command: string,
  options: Omit<LocalHostOptions, "command">,
): Promise<LocalHost> {
  try {
    return await LocalHost.open({ ...options, command });
  } catch (error) {
    if (!(error instanceof StoreError && error.code === "state_dir_locked")) throw error;
    throw new UsageError(busyMessage(options.stateDir));
  }
}

/** Why a state directory cannot be taken, naming who holds it when it says so. */
export function busyMessage(stateDir: string): string {
  const holder = StateDirHolder.read(stateDir);
  const run = holder?.runs.at(-1);
  if (holder === undefined || run === undefined) {
    return `the state directory ${stateDir} is in use by another clustercode process; wait for it or give --state-dir`;
  }
  return (
    `the state directory ${stateDir} is in use by run ${run} (clustercode ${holder.command}, pid ${holder.pid}); ` +
    `watch it with "clustercode log --follow ${run}", or give another --state-dir`
  );
}
