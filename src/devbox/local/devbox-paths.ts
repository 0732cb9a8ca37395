import { join } from "node:path";

/** Where one local DevBox keeps its files. The checkout is a subdirectory so that `git add -A`
 * in a checkpoint never picks up the pid file or the log. */
export interface LocalDevBoxPaths {
  dir: string;
  checkout: string;
  pidFile: string;
  logFile: string;
  /** TMPDIR of the agent and its commands: private, outside the checkout, removed by `stop`. */
  tmp: string;
  /** HOME of a sandboxed agent and its commands. */
  home: string;
}

/** The files of the DevBox whose directory is `dir`. */
export function devBoxPaths(dir: string): LocalDevBoxPaths {
  const files = {
    pidFile: join(dir, "pid"),
    logFile: join(dir, "agent.log"),
    tmp: join(dir, "tmp"),
    home: join(dir, "home"),
  };
  return { dir, checkout: join(dir, "checkout"), ...files };
}
