import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { isFinal, type RunEvent, type RunSnapshot } from "../engine/model.js";
import { LocalHost } from "../runtime/local-host.js";
import { graphVersion } from "../workflow/graph-version.js";
import {
  EXIT,
  formatOption,
  NothingToDoError,
  parseOptions,
  UsageError,
  type Command,
  type CommandIo,
} from "./command.js";
import { interruptedExit, Interruption } from "./interruption.js";
import { LiveOutput } from "./live-output.js";
import { finish, RUN_FORMATS, runIdArgument, usableStateDir } from "./run-output.js";

type Values = Record<string, string | boolean | undefined>;

/**
 * A command that picks a run up in this process (its DevBoxes and timers), optionally offers it
 * an event, and drives it until it finishes or waits on people again. No such run, or an event
 * the run refuses, is "nothing to do" (exit 4); `succeeded` says which end state is exit 0 for
 * this command (the run's own success unless told otherwise).
 */
function controlCommand(
  name: string,
  usage: string,
  options: Record<string, { type: "string" } | { type: "boolean" }>,
  eventOf?: (values: Values, rest: string[], io: CommandIo, at: number) => RunEvent,
  succeeded: (state: RunSnapshot) => boolean = (state) => state.status === "succeeded",
): Command {
  return async (args, io) => {
    const { values, positionals } = parseOptions(args, {
      ...options,
      "state-dir": { type: "string" },
      format: { type: "string" },
      quiet: { type: "boolean", short: "q" },
    });
    const format = formatOption(values.format, RUN_FORMATS);
    const runId = runIdArgument(positionals, usage);
    const event = eventOf?.(values, positionals.slice(1), io, Date.now());
    const stateDir = await usableStateDir(values["state-dir"], io.settings.store);
    const live = new LiveOutput({ io, stateDir, format, quiet: values.quiet === true });
    const host = await LocalHost.open({
      command: name,
      stateDir,
      env: io.env,
      onTransition: live.onTransition,
    });
    const interruption = new Interruption(io.stderr);
    let ended: RunSnapshot | "interrupted";
    try {
      const say = (line: string) => io.stderr.write(`${line}\n`);
      ended = await Promise.race([drive(host, stateDir, runId, event, say), interruption.happened]);
    } finally {
      await host.close();
      await live.stop();
      interruption.dispose();
    }
    if (ended === "interrupted") return interruptedExit(io.stderr, runId);
    const code = finish(io, ended, format);
    return succeeded(ended) ? EXIT.ok : code;
  };
}

/**
 * Picks the run up, offers it the event, and waits until it settles. No such run, a finished
 * run with nothing to offer, or an event the run refuses is "nothing to do".
 */
async function drive(
  host: LocalHost,
  stateDir: string,
  runId: string,
  event: RunEvent | undefined,
  say: (line: string) => void,
): Promise<RunSnapshot> {
  const state = await host.resume(runId);
  if (state === undefined) throw new NothingToDoError(`no run ${runId} in ${stateDir}`);
  const drift = await workflowDrift(host, runId);
  if (drift !== undefined) say(drift.notice);
  if (event?.type === "run.retry" && drift !== undefined) {
    event = { ...event, workflowVersion: drift.now };
  }
  if (event === undefined && isFinal(state.status)) {
    const retry = state.status === "failed" ? ` (clustercode retry ${runId} re-enters it)` : "";
    throw new NothingToDoError(
      `run ${runId} has already ended (${state.status}): nothing to resume${retry}`,
    );
  }
  if (event !== undefined) {
    const delivery = await host.runtime.deliver(runId, event);
    if (!delivery.applied) throw new NothingToDoError(`run ${runId}: ${delivery.refused.message}`);
  }
  if (state.status === "queued") await host.deliver(runId, { type: "run.start", at: Date.now() });
  return host.settled(runId);
}

/**
 * A run goes on with the workflow version it pinned at its start. When its file has changed
 * since, says so, with both versions; undefined when it has not (or cannot be read).
 */
async function workflowDrift(
  host: LocalHost,
  runId: string,
): Promise<{ now: string; notice: string } | undefined> {
  const loaded = await host.runtime.load(runId);
  const source = loaded?.document.definition.source;
  if (loaded === undefined || source === undefined) return undefined;
  const text = await readFile(join(loaded.stored.repo, source.path), "utf8").catch(() => undefined);
  const now = text === undefined ? undefined : graphVersion(text);
  if (now === undefined || now === source.sha) return undefined;
  return {
    now,
    notice: `run ${runId} goes on with the workflow version it started with (${source.sha.slice(0, 12)}); ${source.path} is now ${now.slice(0, 12)}, which it does not run`,
  };
}

function actor(values: Values, io: CommandIo): string {
  return typeof values.as === "string" && values.as !== "" ? values.as : (io.env.USER ?? "local");
}

function note(values: Values): { note?: string } {
  return typeof values.note === "string" ? { note: values.note } : {};
}

/** `clustercode resume RUN`. */
export const resume = controlCommand("resume", "usage: clustercode resume RUN", {});

/** `clustercode approve|reject RUN [--node N] [--as NAME] [--note TEXT]`: answers an approval. */
function answer(decision: "approved" | "rejected"): Command {
  const name = decision === "approved" ? "approve" : "reject";
  return controlCommand(
    name,
    `usage: clustercode ${name} RUN [--node N] [--as NAME] [--note TEXT]`,
    { node: { type: "string" }, as: { type: "string" }, note: { type: "string" } },
    (values, _rest, io, at) => ({
      type: "approval.answer",
      decision,
      actor: actor(values, io),
      where: `clustercode ${name}`,
      ...(typeof values.node === "string" ? { node: values.node } : {}),
      ...note(values),
      at,
    }),
  );
}

/** `clustercode approve RUN`. */
export const approve = answer("approved");
/** `clustercode reject RUN`. */
export const reject = answer("rejected");

/**
 * `clustercode retry RUN [--reset-budget] [--as NAME]`: budgets carry over; `--reset-budget`
 * gives a node (and the run) whose budget was used up a fresh one.
 */
export const retry = controlCommand(
  "retry",
  "usage: clustercode retry RUN [--reset-budget]",
  { as: { type: "string" }, "reset-budget": { type: "boolean" } },
  (values, _rest, io, at) => ({
    type: "run.retry",
    actor: actor(values, io),
    where: "clustercode retry",
    ...(values["reset-budget"] === true ? { resetBudget: true } : {}),
    at,
  }),
);

/** `clustercode cancel RUN [--as NAME]`: exit 0 once the run is cancelled. */
export const cancel = controlCommand(
  "cancel",
  "usage: clustercode cancel RUN",
  { as: { type: "string" } },
  (values, _rest, io, at) => ({
    type: "run.cancel",
    actor: actor(values, io),
    at,
  }),
  (state) => state.status === "cancelled",
);

/** `clustercode resolve RUN succeeded|failed [--as NAME] [--note TEXT]`. */
export const resolveRun = controlCommand(
  "resolve",
  "usage: clustercode resolve RUN succeeded|failed",
  { as: { type: "string" }, note: { type: "string" } },
  (values, rest, io, at) => {
    const outcome = rest[0];
    if (outcome !== "succeeded" && outcome !== "failed") {
      throw new UsageError("usage: clustercode resolve RUN succeeded|failed");
    }
    return { type: "run.resolve", outcome, actor: actor(values, io), ...note(values), at };
  },
);
