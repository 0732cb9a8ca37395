import { cleanIssueText, type CleanedText } from "../agents/clean-text.js";
import type { Workflow } from "../workflow/workflow.schema.js";
import { UsageError } from "./command.js";
import { listing, type WorkflowFile } from "./workflow-choice.js";

/** What a GitHub webhook payload asks for, as the app reads it. */
export interface EventTrigger {
  /** The trigger, in words (`label ready`, `/clustercode run fix`). */
  what: string;
  /** Does this trigger start `workflow`? */
  starts(workflow: Workflow): boolean;
  /** The workflow a command names, when it names one. */
  named?: string;
  /** The brief: the issue's title and body, cleaned as the app cleans them. */
  brief: CleanedText;
}

type Payload = {
  action?: unknown;
  label?: { name?: unknown };
  issue?: { title?: unknown; body?: unknown };
  comment?: { body?: unknown };
};

/**
 * Reads the trigger and the brief from a webhook payload (`issues` labeled, or an
 * `issue_comment` with `/clustercode run [NAME]`), as `act -e` reads an event: the run starts
 * as the app would start it for that delivery.
 */
export function eventTrigger(text: string, file: string): EventTrigger {
  let payload: Payload;
  try {
    payload = JSON.parse(text) as Payload;
  } catch (error) {
    throw new UsageError(`${file} is not JSON: ${(error as Error).message}`, { cause: error });
  }
  const issue = payload.issue;
  if (typeof issue?.title !== "string") {
    throw new UsageError(`${file} has no issue: give an issues or issue_comment payload`);
  }
  const body = typeof issue.body === "string" ? issue.body.trim() : "";
  // The issue's title and body, cleaned as the app cleans them.
  const brief = cleanIssueText(
    body === "" ? `${issue.title.trim()}\n` : `${issue.title.trim()}\n\n${body}\n`,
  );
  const label = payload.label?.name;
  if (payload.action === "labeled" && typeof label === "string") {
    return {
      what: `label ${label}`,
      brief,
      starts: (workflow) => labelsOf(workflow).includes(label),
    };
  }
  const comment = payload.comment?.body;
  const command = typeof comment === "string" ? runCommandOf(comment) : undefined;
  if (command !== undefined) {
    return {
      what: `/clustercode run${command.workflow === undefined ? "" : ` ${command.workflow}`}`,
      brief,
      starts: (workflow) => workflow.on.command,
      ...(command.workflow === undefined ? {} : { named: command.workflow }),
    };
  }
  throw new UsageError(
    `${file} starts no run: the app starts runs on an issue labeled, or a comment with /clustercode run [NAME]`,
  );
}

/** The workflow an event starts among the repository's, or a usage error that says why none. */
export function workflowOfEvent(trigger: EventTrigger, files: WorkflowFile[]): WorkflowFile {
  const hits = files.filter((file) => {
    if (!file.parsed.ok || !trigger.starts(file.parsed.workflow)) return false;
    return trigger.named === undefined || file.parsed.workflow.name === trigger.named;
  });
  const [hit] = hits;
  if (hits.length === 1 && hit !== undefined) return hit;
  const main = hits.find((file) => file.file.endsWith(".clustercode/workflow.yml"));
  if (trigger.named === undefined && trigger.what.startsWith("/") && main !== undefined)
    return main;
  throw new UsageError(
    hits.length === 0
      ? `no valid workflow is started by ${trigger.what}\n${listing(files)}`
      : `${hits.length} workflows are started by ${trigger.what}: name one (clustercode run NAME --event FILE)\n${listing(hits)}`,
  );
}

function labelsOf(workflow: Workflow): string[] {
  const labels = workflow.on.label;
  if (labels === undefined) return [];
  return Array.isArray(labels) ? labels : [labels];
}

/** `/clustercode run [NAME]` at the start of a comment's line, as the app reads it. */
function runCommandOf(comment: string): { workflow?: string } | undefined {
  const match = /^\/clustercode\s+run(?:\s+(\S+))?\s*$/m.exec(comment);
  if (match === null) return undefined;
  return match[1] === undefined ? {} : { workflow: match[1] };
}
