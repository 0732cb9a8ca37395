import { resolve } from "node:path";
import { openStore } from "../store/embedded.js";
import type { Store } from "../store/store.js";
import type { RunSnapshot } from "../engine/model.js";
import type { RunDocument } from "../runtime/runtime.js";
import { formatOption, parseOptions, type Command, type CommandIo } from "./command.js";
import {
  describeEvidence,
  resolveStateDir,
  RUN_FORMATS,
  runIdArgument,
  summarize,
} from "./run-output.js";

async function withStore<T>(
  stateDir: string | undefined,
  io: CommandIo,
  use: (store: Store) => Promise<T>,
): Promise<T> {
  const opened = await openStore({ stateDir: resolveStateDir(stateDir, io.env), env: io.env });
  try {
    return await use(opened.store);
  } finally {
    await opened.close();
  }
}

/** `clustercode status [RUN] [--repo DIR]`: one run, or the runs of a repository. */
export const status: Command = async (args, io) => {
  const { values, positionals } = parseOptions(args, {
    repo: { type: "string" },
    "state-dir": { type: "string" },
    format: { type: "string" },
  });
  const format = formatOption(values.format, RUN_FORMATS);
  return withStore(values["state-dir"], io, async (store) => {
    const [runId] = positionals;
    const runs =
      runId === undefined
        ? await store.listRuns(resolve(io.cwd, values.repo ?? "."), { limit: 50 })
        : [await store.getRun(runId)].filter((run) => run !== undefined);
    if (runId !== undefined && runs.length === 0) {
      io.stderr.write(`clustercode status: no run ${runId} in this state directory\n`);
      return 2;
    }
    const states = runs.map((run) => (run.snapshot as RunDocument).state);
    if (format === "json") {
      io.stdout.write(
        `${JSON.stringify(runId === undefined ? { runs: states.map(summarize) } : summarize(states[0] as never))}\n`,
      );
      return 0;
    }
    for (const state of states) {
      const why = state.reason ?? awaitingNote(state);
      io.stdout.write(
        `${state.runId}  ${state.status.padEnd(14)}  ${state.branch}${why === undefined ? "" : `  (${why})`}\n`,
      );
      if (runId === undefined) continue;
      for (const [index, visit] of state.visits.entries()) {
        io.stdout.write(
          `  ${visit.node.padEnd(20)} attempt ${visit.attempt}  ${visit.outcome ?? openVisitState(state, index)}${visit.label === undefined ? "" : ` → ${visit.label}`}\n`,
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

/** `clustercode log RUN`: the run's evidence log, in order. */
export const log: Command = async (args, io) => {
  const { values, positionals } = parseOptions(args, {
    "state-dir": { type: "string" },
    format: { type: "string" },
  });
  const format = formatOption(values.format, RUN_FORMATS);
  const runId = runIdArgument(positionals, "usage: clustercode log RUN");
  return withStore(values["state-dir"], io, async (store) => {
    if ((await store.getRun(runId)) === undefined) {
      io.stderr.write(`clustercode log: no run ${runId} in this state directory\n`);
      return 2;
    }
    for (const record of await store.listEvidence(runId)) {
      if (format === "json") {
        io.stdout.write(`${JSON.stringify({ seq: record.seq, ...(record.entry as object) })}\n`);
      } else {
        const entry = record.entry as { kind: string; at: number };
        const line = describeEvidence(entry) ?? entry.kind;
        io.stdout.write(
          `${String(record.seq).padStart(4)}  ${new Date(entry.at).toISOString()}  ${line}\n`,
        );
      }
    }
    return 0;
  });
};
