import type { Admission } from "../../runtime/admission.js";
import { createIssueRun } from "../../runtime/issue-run-creation.js";
import type { Runtime } from "../../runtime/runtime.js";
import type { Store } from "../../store/store.js";
import type { Workflow } from "../../workflow/workflow.schema.js";
import { callGitHub, isNotFound } from "../client/errors.js";
import { fullName, type GitHub, type RepoRef } from "../client/github.js";
import { mayWrite } from "../client/permissions.js";
import { reply } from "../client/replies.js";
import { WORKFLOW_FILE } from "../../workflow/workflow-paths.js";
import { readWorkflows, type WorkflowFile } from "../client/workflow-source.js";
import { buildBrief } from "./brief.js";

/** Which workflows a trigger asks for. */
export type Selector =
  | { by: "label"; label: string }
  | { by: "command"; workflow?: string }
  | { by: "schedule"; workflow: string };

/** One request to start runs on an issue. */
export interface TriggerRequest {
  gh: GitHub;
  repo: RepoRef;
  issue: { number: number; title: string; body: string | null | undefined };
  actor: string;
  /** Unique per trigger (a delivery id, a schedule firing): the run id derives from it. */
  key: string;
  select: Selector;
  /** Whether the actor's write access must be checked (not for schedules). */
  checkActor: boolean;
  /** Brief override (a schedule's `brief`). */
  brief?: string;
}

/** Told when a run was created, so its surfaces appear (the status comment of a queued run). */
export type OnCreated = (runId: string) => void;

/**
 * Turns a trigger into runs: reads the workflows from the default branch, checks the actor,
 * removes the trigger label, and creates each run (createIssueRun: one active run per issue and
 * workflow, the run id derived from the trigger key), started or queued by admission; a
 * workflow with a run still active on the issue gets a reply instead.
 */
export class RunStarter {
  constructor(
    private readonly deps: {
      store: Store;
      runtime: Runtime;
      admission: Admission;
      now: () => number;
      onCreated: OnCreated;
    },
  ) {}

  /** Starts (or queues) the runs a trigger asks for; returns their ids. */
  async trigger(request: TriggerRequest): Promise<string[]> {
    const { gh, repo, issue, actor, select } = request;
    const files = await readWorkflows(gh, repo);
    const chosen = chooseWorkflows(files, select);
    // Any label may be put on an issue: one no workflow names is none of our business, unless a
    // workflow file that does not parse mentions it.
    if (
      typeof chosen === "string" &&
      select.by === "label" &&
      !files.some((file) => !file.parsed.ok && file.text.includes(select.label))
    )
      return [];
    if (request.checkActor) {
      const permission = await mayWrite(gh, repo, actor);
      if (!permission.ok) {
        await reply(gh, repo, issue.number, `ClusterCode did not start a run: ${permission.why}`);
        return [];
      }
    }
    if (typeof chosen === "string") {
      await reply(gh, repo, issue.number, chosen);
      return [];
    }
    const started: string[] = [];
    for (const { file, workflow } of chosen) {
      const runId = await this.#startOne(request, file, workflow);
      if (runId !== undefined) started.push(runId);
    }
    // After the runs started: a write waits its turn at GitHub's pace, and the runs need not.
    // A delivery retried because it failed starts no run twice (the trigger's key).
    if (select.by === "label") await removeLabel(gh, repo, issue.number, select.label);
    return started;
  }

  async #startOne(request: TriggerRequest, file: WorkflowFile, workflow: Workflow) {
    const { gh, repo, issue } = request;
    const brief =
      request.brief === undefined
        ? buildBrief(issue.title, issue.body)
        : { text: request.brief, removed: buildBrief("", "").removed };
    const created = await createIssueRun(this.deps, {
      repo: fullName(repo),
      baseBranch: repo.defaultBranch,
      issue: issue.number,
      workflow,
      source: { path: file.path, sha: file.sha },
      key: request.key,
      brief,
      startedBy: request.actor,
    });
    if (created.outcome === "busy") {
      await reply(
        gh,
        repo,
        issue.number,
        `ClusterCode: run \`${created.activeRunId}\` of ${workflow.name} is still active on this issue; \`/cancel\` it first or wait for it to end.`,
      );
      return undefined;
    }
    if (created.outcome === "admit") await this.#admit(fullName(repo), workflow, created.runId);
    return created.runId;
  }

  /** Starts a queued run when admission allows it now; else shows it queued. */
  async #admit(repoName: string, workflow: Workflow, runId: string): Promise<void> {
    const { admission, runtime } = this.deps;
    if (!(await admission.admit(repoName, workflow, runId, runtime))) this.deps.onCreated(runId);
  }
}

/** The valid workflows a selector picks, or why none (a reply for the person). */
export function chooseWorkflows(
  files: WorkflowFile[],
  select: Selector,
): { file: WorkflowFile; workflow: Workflow }[] | string {
  const valid = files.flatMap((file) =>
    file.parsed.ok ? [{ file, workflow: file.parsed.workflow }] : [],
  );
  if (select.by === "label") {
    const hits = valid.filter(({ workflow }) => {
      const labels = workflow.on.label;
      return (
        labels !== undefined && (Array.isArray(labels) ? labels : [labels]).includes(select.label)
      );
    });
    return hits.length > 0
      ? hits
      : invalidOr(
          files,
          `ClusterCode: no valid workflow is triggered by the label \`${select.label}\`.`,
        );
  }
  const name = select.workflow;
  if (name === undefined) {
    const main =
      valid.find(({ file }) => file.path === WORKFLOW_FILE) ??
      (valid.length === 1 ? valid[0] : undefined);
    if (main === undefined || main.workflow.on.command === false) {
      return invalidOr(
        files,
        "ClusterCode: name the workflow to run: `/clustercode run <name>`" + listing(valid),
      );
    }
    return [main];
  }
  const match = valid.find(({ workflow }) => workflow.name === name);
  if (match === undefined)
    return invalidOr(
      files,
      `ClusterCode: no valid workflow named \`${name}\` on the default branch.${listing(valid)}`,
    );
  if (select.by === "command" && match.workflow.on.command === false) {
    return `ClusterCode: workflow \`${name}\` does not accept \`/clustercode run\` (on.command is false).`;
  }
  return [match];
}

function invalidOr(files: WorkflowFile[], message: string): string {
  const broken = files.filter((file) => !file.parsed.ok).map((file) => `\`${file.path}\``);
  return broken.length === 0
    ? message
    : `${message}\n\nThese workflow files do not validate: ${broken.join(", ")}.`;
}

function listing(valid: { workflow: Workflow }[]): string {
  return valid.length === 0
    ? ""
    : ` Workflows: ${valid.map(({ workflow }) => `\`${workflow.name}\``).join(", ")}.`;
}

async function removeLabel(gh: GitHub, repo: RepoRef, issue: number, label: string): Promise<void> {
  try {
    await callGitHub(`remove label ${label}`, () =>
      gh.request("DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels/{name}", {
        owner: repo.owner,
        repo: repo.repo,
        issue_number: issue,
        name: label,
      }),
    );
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
}
