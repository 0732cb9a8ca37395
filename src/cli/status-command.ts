import { resolve } from "node:path";
import { openStore } from "../store/embedded.js";
import type { Store } from "../store/store.js";
import type { RunDocument } from "../runtime/runtime.js";
import {
  formatOption,
  NothingToDoError,
  parseOptions,
  type Command,
  type CommandIo,
} from "./command.js";
import {
  describeEvidence,
  RUN_FORMATS,
  runIdArgument,
  summarize,
  usableStateDir,
} from "./run-output.js";

async function withStore<T>(
  stateDir: string | undefined,
  io: CommandIo,
  use: (store: Store, stateDir: string) => Promise<T>,
): Promise<T> {
  const dir = await usableStateDir(stateDir, io.env);
  const opened = await openStore({ stateDir: dir, env: io.env });
  try {
    return await use(opened.store, dir);
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
  return withStore(values["state-dir"], io, async (store, stateDir) => {
    const [runId] = positionals;
    const runs =
      runId === undefined
        ? await store.listRuns(resolve(io.cwd, values.repo ?? "."), { limit: 50 })
        : [await store.getRun(runId)].filter((run) => run !== undefined);
    if (runId !== undefined && runs.length === 0) {
      throw new NothingToDoError(`no run ${runId} in ${stateDir}`);
    }
    const states = runs.map((run) => (run.snapshot as RunDocument).state);
    if (format === "json") {
      io.stdout.write(
        `${JSON.stringify(runId === undefined ? { runs: states.map(summarize) } : summarize(states[0] as never))}\n`,
      );
      return 0;
    }
    for (const state of states) {
      io.stdout.write(
        `${state.runId}  ${state.status.padEnd(14)}  ${state.branch}${state.reason === undefined ? "" : `  (${state.reason})`}\n`,
      );
      if (runId === undefined) continue;
      for (const visit of state.visits) {
        io.stdout.write(
          `  ${visit.node.padEnd(20)} attempt ${visit.attempt}  ${visit.outcome ?? "running"}${visit.label === undefined ? "" : ` → ${visit.label}`}\n`,
        );
      }
    }
    if (states.length === 0) io.stdout.write("no runs\n");
    return 0;
  });
};

/** `clustercode log RUN`: the run's evidence log, in order. */
export const log: Command = async (args, io) => {
  const { values, positionals } = parseOptions(args, {
    "state-dir": { type: "string" },
    format: { type: "string" },
  });
  const format = formatOption(values.format, RUN_FORMATS);
  const runId = runIdArgument(positionals, "usage: clustercode log RUN");
  return withStore(values["state-dir"], io, async (store, stateDir) => {
    if ((await store.getRun(runId)) === undefined) {
      throw new NothingToDoError(`no run ${runId} in ${stateDir}`);
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
