import { cleanIssueText } from "../agents/clean-text.js";
import type { RemovedText } from "../engine/model.js";
import type { Workflow } from "../workflow/workflow.schema.js";
import { readInput, UsageError, type CommandIo } from "./command.js";
import { eventTrigger, workflowOfEvent } from "./event-trigger.js";
import { partOf } from "./partial-run.js";
import { renderReports } from "./validate-command.js";
import { chooseWorkflow, readWorkflows, type WorkflowFile } from "./workflow-choice.js";

/** The options of `run` that decide what it runs. */
export interface RunChoiceOptions {
  brief?: string | undefined;
  "brief-file"?: string | undefined;
  event?: string | undefined;
  from?: string | undefined;
  only?: string | undefined;
}

/** What `run` runs: the workflow (or the part of it asked for), its file, and the brief. */
export interface RunChoice {
  file: WorkflowFile;
  workflow: Workflow;
  brief: { text: string; removed: RemovedText };
}

/**
 * Chooses the workflow (by file, by name, by the `--event` payload's trigger, or the
 * repository's default), the part of it to run, and the brief (`--brief`, `--brief-file`, or
 * the event's issue). An invalid workflow is a usage error showing its findings.
 */
export async function chooseRun(
  io: CommandIo,
  argument: string | undefined,
  options: RunChoiceOptions,
): Promise<RunChoice> {
  const briefs = [options.brief, options["brief-file"], options.event].filter(
    (given) => given !== undefined,
  );
  if (briefs.length > 1) throw new UsageError("give one of --brief, --brief-file and --event");
  const event =
    options.event === undefined
      ? undefined
      : eventTrigger(await readInput(io, options.event), options.event);
  const file =
    event === undefined || argument !== undefined
      ? await chooseWorkflow(io, argument)
      : workflowOfEvent(event, await readWorkflows(io));
  if (!file.parsed.ok) {
    throw new UsageError(
      `${file.file} does not validate:\n${renderReports([{ file: file.file, valid: false, findings: file.parsed.findings, text: file.text }], "human").trimEnd()}`,
    );
  }
  const workflow = file.parsed.workflow;
  if (event !== undefined && !event.starts(workflow)) {
    throw new UsageError(`${event.what} does not start ${workflow.name} (see its on:)`);
  }
  const text =
    options["brief-file"] !== undefined
      ? await readInput(io, options["brief-file"])
      : (options.brief ?? "");
  // A brief may be an issue pasted from GitHub: it gets the same cleaning as the app's.
  const brief = event?.brief ?? cleanIssueText(text);
  return { file, workflow: partOf(workflow, options.from, options.only), brief };
}
