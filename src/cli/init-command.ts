import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import {
  describeFsError,
  NothingToDoError,
  parseOptions,
  UsageError,
  type Command,
} from "./command.js";
import { findGitRoot } from "../workflow/find-workflows.js";

/** The workflow `init` writes: the example shipped in the package, tested with the others. */
const TEMPLATE = new URL("../../workflows-schema/examples/first-workflow.yml", import.meta.url);

/**
 * `clustercode init`: writes a first `.clustercode/workflow.yml` at the root of the repository
 * the current directory is in (a `run` node, a `loop` with a command gate, an `approval`) that
 * runs offline with no API key. It never overwrites a workflow.
 */
const init: Command = async (args, io) => {
  const { positionals } = parseOptions(args, {});
  if (positionals.length > 0)
    throw new UsageError("init takes no arguments", { pointToHelp: true });
  const root = await findGitRoot(io.cwd);
  if (root === undefined) {
    throw new UsageError(
      `${io.cwd} is not inside a git repository: runs work on one (git init, then clustercode init)`,
    );
  }
  const target = join(root, ".clustercode", "workflow.yml");
  const shown = relative(io.cwd, target);
  // The example's modeline points into the package; in a repository it would point nowhere.
  const text = (await readFile(TEMPLATE, "utf8")).replace(/^# yaml-language-server:.*\n/, "");
  try {
    await mkdir(join(root, ".clustercode"), { recursive: true });
    await writeFile(target, text, { flag: "wx" });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") {
      throw new NothingToDoError(
        `${shown} already exists; init never overwrites a workflow: edit it, or move it away and run init again`,
      );
    }
    throw new UsageError(`cannot write ${shown}: ${describeFsError(error)}`, { cause: error });
  }
  io.stdout.write(
    `wrote ${shown}: a run node, a loop with a command gate and an approval, offline and with no API key\n` +
      `next: clustercode run   (it stops at the approval; then clustercode approve RUN)\n`,
  );
  return 0;
};
export default init;
