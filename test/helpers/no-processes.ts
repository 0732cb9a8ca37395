/**
 * Runs before every file of the `unit` project: unit tests start no processes. Starting one
 * (git, the CLI, a DevBox, a browser) throws, saying that the file belongs in the `integration`
 * project (see vitest.config.ts), so a unit run stays free of processes as files change.
 */
import childProcess from "node:child_process";
import { syncBuiltinESMExports } from "node:module";

const STARTERS = [
  "spawn",
  "spawnSync",
  "exec",
  "execSync",
  "execFile",
  "execFileSync",
  "fork",
] as const;

for (const name of STARTERS) {
  Object.assign(childProcess, {
    [name]: () => {
      throw new Error(
        `a unit test started a process (child_process.${name}); list the file under integration in vitest.config.ts`,
      );
    },
  });
}
// `import { spawn } from "node:child_process"` reads the ESM view of the module: update it too.
syncBuiltinESMExports();
