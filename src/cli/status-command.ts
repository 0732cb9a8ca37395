import { resolve } from "node:path";
import type { RunSnapshot } from "../engine/model.js";
import type { HolderInfo } from "../store/state-dir-holder.js";
import type { Store } from "../store/store.js";
import { readStateDir } from "./busy-state-dir.js";
import {
  formatOption,
  NothingToDoError,
  parseOptions,
  type Command,
  type CommandIo,
} from "./command.js";
import { EvidenceNarrator, renderRecord } from "./evidence-narrator.js";
import { followRun } from "./follow-run.js";
import { RUN_FORMATS, runIdArgument, summarize, usableStateDir } from "./run-output.js";
import { RunRepository } from "../store/run-repository.js";

/** The store of a state directory, read directly or through the process holding it. */
async function withStore<T>(
  stateDir: string,
  io: CommandIo,
  use: (store: Store, holder: HolderInfo | undefined) => Promise<T>,
): Promise<T> {
  const opened = await readStateDir(stateDir, io.env);
  try {
    return await use(opened.store, opened.holder);
  } finally {
    await opened.close();
  }
}

/**
 * Where a run stands as a person should read it: a run the engine has as `running` that no
 * live process drives (its `clustercode run` was interrupted or died) is `interrupted`.
 */
export function standing(state: RunSnapshot, holder: HolderInfo | undefined): string {
  const driven = holder?.runs.includes(state.runId) === true;
  return state.status === "running" && !driven ? "interrupted" : state.status;
}

/** `clustercode status [RUN] [--repo DIR]`: one run, or the runs of a repository. */
export const status: Command = async (args, io) => {
  const { values, positionals } = parseOptions(args, {
    repo: { type: "string" },
    "state-dir": { type: "string" },
    format: { type: "string" },
  });
  const format = formatOption(values.format, RUN_FORMATS);
  const stateDir = await usableStateDir(values["state-dir"], io.env);
  return withStore(stateDir, io, async (store, holder) => {
    const [runId] = positionals;
    const repository = new RunRepository(store);
    const runs =
      runId === undefined
        ? await repository.list(resolve(io.cwd, values.repo ?? "."), { limit: 50 })
        : [await repository.get(runId)].filter((run) => run !== undefined);
    if (runId !== undefined && runs.length === 0) {
      throw new NothingToDoError(`no run ${runId} in ${stateDir}`);
    }
    const states = runs.map((run) => run.document.state);
    if (format === "json") {
      const summaries = states.map((state) => ({
        ...summarize(state),
        status: standing(state, holder),
      }));
      io.stdout.write(
        `${JSON.stringify(runId === undefined ? { runs: summaries } : summaries[0])}\n`,
      );
      return 0;
    }
    for (const state of states) {
      const shown = standing(state, holder);
      const why = state.reason ?? awaitingNote(state);
      io.stdout.write(
        `${state.runId}  ${shown.padEnd(14)}  ${state.branch}${why === undefined ? "" : `  (${why})`}\n`,
      );
      if (runId === undefined) continue;
      for (const [index, visit] of state.visits.entries()) {
        io.stdout.write(
          `  ${visit.node.padEnd(20)} attempt ${visit.attempt}  ${visit.outcome ?? (shown === "interrupted" ? shown : openVisitState(state, index))}${visit.label === undefined ? "" : ` → ${visit.label}`}\n`,
        );
      }
      if (shown === "interrupted") {
        io.stdout.write(
          `its process stopped; continue it with: clustercode resume ${state.runId}\n`,
        );
      }
    }
    if (states.length === 0) io.stdout.write("no runs\n");
    return 0;
  });
};

/** What a run awaiting input waits for, in a few words. */
function awaitingNote(state: RunSnapshot): string | undefined {
  switch (state.awaiting?.kind) {
    case "approval":
      return `waiting for approval of ${state.awaiting.node}`;
    case "lost":
      return `${state.awaiting.node} was lost: waiting for retry or resolve`;
    case undefined:
      return undefined;
  }
}

/** The state of the visit at `index` that has no outcome yet. */
function openVisitState(state: RunSnapshot, index: number): string {
  if (state.active?.visit !== index) return "running";
  return state.awaiting?.kind === "approval" ? "awaiting approval" : "running";
}

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
  const stateDir = await usableStateDir(values["state-dir"], io.env);
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
