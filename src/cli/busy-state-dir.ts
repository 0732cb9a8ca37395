import { StateDirHolder } from "../store/state-dir-holder.js";
import { openStateDirReader, type StateDirReader } from "../store/state-dir-reader.js";
import { StoreError } from "../store/store-error.js";
import { NothingToDoError } from "./command.js";

/**
 * Opens a state directory to read (see {@link openStateDirReader}); a directory held by a
 * process that never says who it is becomes a one-line usage error.
 */
export async function readStateDir(
  stateDir: string,
  env: NodeJS.ProcessEnv,
): Promise<StateDirReader> {
  try {
    return await openStateDirReader({ stateDir, env });
  } catch (error) {
    if (!(error instanceof StoreError && error.code === "state_dir_locked")) throw error;
    throw new NothingToDoError(busyMessage(stateDir));
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
