import type { RunEvent } from "../engine/model.js";
import { LocalHost } from "../runtime/local-host.js";
import { formatOption, parseOptions, UsageError, type Command, type CommandIo } from "./command.js";
import {
  finish,
  progressPrinter,
  resolveStateDir,
  RUN_FORMATS,
  runIdArgument,
} from "./run-output.js";

type Values = Record<string, string | boolean | undefined>;

/**
 * A command that picks a run up in this process (its DevBoxes and timers), optionally offers it
 * an event, and drives it until it finishes or waits on people again.
 */
function controlCommand(
  name: string,
  usage: string,
  options: Record<string, { type: "string" | "boolean" }>,
  eventOf?: (values: Values, rest: string[], io: CommandIo, at: number) => RunEvent,
): Command {
  return async (args, io) => {
    const { values, positionals } = parseOptions(args, {
      ...options,
      "state-dir": { type: "string" },
      format: { type: "string" },
    });
    const format = formatOption(values.format, RUN_FORMATS);
    const runId = runIdArgument(positionals, usage);
    const event = eventOf?.(values, positionals.slice(1), io, Date.now());
    const host = await LocalHost.open({
      stateDir: resolveStateDir(values["state-dir"], io.env),
      env: io.env,
      onTransition: progressPrinter(io, format),
    });
    try {
      const state = await host.resume(runId);
      if (state === undefined) {
        io.stderr.write(`clustercode ${name}: no run ${runId} in this state directory\n`);
        return 2;
      }
      if (event !== undefined) {
        const delivery = await host.runtime.deliver(runId, event);
        if (!delivery.applied) {
          io.stderr.write(`clustercode ${name}: ${delivery.refused}\n`);
          return 2;
        }
      }
      if (state.status === "queued")
        await host.deliver(runId, { type: "run.start", at: Date.now() });
      return finish(io, await host.settled(runId), format);
    } finally {
      await host.close();
    }
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

/** `clustercode cancel RUN [--as NAME]`. */
export const cancel = controlCommand(
  "cancel",
  "usage: clustercode cancel RUN",
  { as: { type: "string" } },
  (values, _rest, io, at) => ({
    type: "run.cancel",
    actor: actor(values, io),
    at,
  }),
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
