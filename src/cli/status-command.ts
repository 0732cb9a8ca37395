import type { RunSnapshot } from "../engine/model.js";
import { openStore } from "../store/embedded.js";
import { StateDirHolder } from "../store/state-dir-holder.js";
import type { Store } from "../store/store.js";
import {
  formatOption,
  NothingToDoError,
  parseOptions,
  type Command,
  type CommandIo,
} from "./command.js";
import { EvidenceNarrator, renderRecord } from "./evidence-narrator.js";
import { repositoryOf } from "./repository-of.js";
import { followRun } from "./follow-run.js";
import { statusDetail, statusTable } from "./status-view.js";
import { RUN_FORMATS, runIdArgument, summarize, usableStateDir } from "./run-output.js";
import { RunRepository } from "../store/run-repository.js";

/** The store of a state directory, shared with the processes using it meanwhile. */
export async function withStore<T>(
  stateDir: string,
  io: CommandIo,
  use: (store: Store) => Promise<T>,
): Promise<T> {
  const opened = await openStore({ stateDir, settings: io.settings.store });
  try {
    return await use(opened.store);
  } finally {
    await opened.close();
  }
}

/**
 * Where a run stands as a person should read it: a run the engine has as `running` that no
 * live process drives (its `clustercode run` was interrupted or died) is `interrupted`.
 */
export function standing(state: RunSnapshot, stateDir: string): string {
  const driven = StateDirHolder.driverOf(stateDir, state.runId) !== undefined;
  return state.status === "running" && !driven ? "interrupted" : state.status;
}

/**
 * `clustercode status [RUN] [--repo DIR]`: one run in detail, or the runs of a repository (the
 * one the current directory is in, else --repo) with their workflow, start and duration.
 */
export const status: Command = async (args, io) => {
  const { values, positionals } = parseOptions(args, {
    repo: { type: "string" },
    "state-dir": { type: "string" },
    format: { type: "string" },
  });
  const format = formatOption(values.format, RUN_FORMATS);
  const [runId] = positionals;
  const repo =
    runId === undefined
      ? await repositoryOf(io.cwd, values.repo, "give a RUN, or --repo DIR for a repository's runs")
      : undefined;
  const stateDir = await usableStateDir(values["state-dir"], io.settings.store);
  return withStore(stateDir, io, async (store) => {
    const repository = new RunRepository(store);
    const runs =
      repo !== undefined
        ? await repository.list(repo, { limit: 50 })
        : [await repository.get(runId ?? "")].filter((run) => run !== undefined);
    if (runId !== undefined && runs.length === 0) {
      throw new NothingToDoError(`no run ${runId} in ${stateDir}`);
    }
    const rows = runs.map((run) => {
      const { state, definition } = run.document;
      return { state, workflow: definition.workflow.name, shown: standing(state, stateDir) };
    });
    if (format === "json") {
      const summaries = rows.map((row) => ({
        ...summarize(row.state),
        workflow: row.workflow,
        status: row.shown,
      }));
      io.stdout.write(
        `${JSON.stringify(repo !== undefined ? { runs: summaries } : summaries[0])}\n`,
      );
      return 0;
    }
    const now = Date.now();
    const [only] = rows;
    if (repo === undefined && only !== undefined) io.stdout.write(statusDetail(only, now));
    else io.stdout.write(rows.length === 0 ? "no runs\n" : statusTable(rows, now));
    return 0;
  });
};

/**
 * `clustercode log RUN [--follow]`: the run's evidence log, in order; with `--follow`, then its
 * new entries and its DevBoxes' output as they come, until the run finishes or waits on people.
 */
export const log: Command = async (args, io) => {
  const { values, positionals } = parseOptions(args, {
    "state-dir": { type: "string" },
    format: { type: "string" },
    follow: { type: "boolean", short: "f" },
  });
  const format = formatOption(values.format, RUN_FORMATS);
  const runId = runIdArgument(positionals, "usage: clustercode log RUN [--follow]");
  const stateDir = await usableStateDir(values["state-dir"], io.settings.store);
  if (values.follow === true) return followRun({ stateDir, runId, io, format });
  return withStore(stateDir, io, async (store) => {
    const runs = new RunRepository(store);
    if ((await runs.version(runId)) === undefined) {
      throw new NothingToDoError(`no run ${runId} in ${stateDir}`);
    }
    const narrator = new EvidenceNarrator();
    for (const record of await runs.evidence(runId)) {
      io.stdout.write(renderRecord(record, narrator, format));
    }
    return 0;
  });
};
