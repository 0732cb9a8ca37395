import { createHash } from "node:crypto";
import { resolveEngines } from "../../agents/engines.js";
import type { RunDefinition } from "../../engine/model.js";
import { createSnapshot } from "../../engine/step.js";
import type { RunDocument, Runtime } from "../../runtime/runtime.js";
import { storedDocument } from "../../store/run-repository.js";
import type { Store } from "../../store/store.js";
import { StoreError } from "../../store/store-error.js";
import type { Workflow } from "../../workflow/workflow.schema.js";
import { createRun, type Admission } from "../../runtime/admission.js";
import { buildBrief } from "./brief.js";
import { callGitHub, isNotFound } from "../client/errors.js";
import { fullName, type GitHub, type RepoRef } from "../client/github.js";
import { mayWrite } from "../client/permissions.js";
import { reply } from "../client/replies.js";
import { isActive, runBranch, runsOfIssue } from "./run-index.js";
import { readWorkflows, WORKFLOW_FILE, type WorkflowFile } from "../client/workflow-source.js";

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
 * keeps one active run per issue and workflow, removes the trigger label, and creates each run,
 * started or queued by admission. The run id derives from the trigger key, so a duplicated
 * delivery finds its run already created and starts nothing twice.
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
    if (select.by === "label") await removeLabel(gh, repo, issue.number, select.label);
    const started: string[] = [];
    for (const { file, workflow } of chosen) {
      const runId = await this.#startOne(request, file, workflow);
      if (runId !== undefined) started.push(runId);
    }
    return started;
  }

  async #startOne(request: TriggerRequest, file: WorkflowFile, workflow: Workflow) {
    const repoName = fullName(request.repo);
    const runId = runIdOf(request.key, workflow.name);
    // The check for an active run and the create are one step across replicas: two triggers
    // of a workflow on one issue at the same moment must not both start a run. The lock is held
    // by the run id, so the same trigger delivered twice shares it; its conditional create lets
    // only one of them make the run.
    const lock = `trigger:${repoName}#${request.issue.number}#${workflow.name}`;
    await this.#lock(lock, runId);
    let outcome: "admit" | "started" | "busy";
    try {
      outcome = await this.#create(request, file, workflow, runId);
    } finally {
      await this.deps.store.releaseLease(lock, runId);
    }
    if (outcome === "busy") return undefined;
    if (outcome === "admit") await this.#admit(repoName, workflow, runId);
    return runId;
  }

  /** Takes a trigger lock, waiting (boundedly) while another trigger holds it. */
  async #lock(name: string, holder: string): Promise<void> {
    for (let attempt = 0; attempt < LOCK_ATTEMPTS; attempt++) {
      if (await this.deps.store.acquireLease(name, holder, this.deps.now(), LOCK_MS)) return;
      await new Promise((resolve) => setTimeout(resolve, LOCK_WAIT_MS));
    }
    throw new StoreError("condition_failed", `${name} stayed held by another trigger`, {
      retryable: true,
    });
  }

  /**
   * Creates the run, queued, unless another run of the workflow is active on the issue ("busy").
   * A redelivered trigger finds its run: "admit" again when a crash left it queued before it
   * started (the engine refuses a second start), else "started".
   */
  async #create(
    request: TriggerRequest,
    file: WorkflowFile,
    workflow: Workflow,
    runId: string,
  ): Promise<"admit" | "started" | "busy"> {
    const { gh, repo, issue, actor } = request;
    const repoName = fullName(repo);
    const existing = await runsOfIssue(this.deps.store, repoName, issue.number);
    const seen = existing.find((run) => run.stored.runId === runId);
    if (seen !== undefined) return seen.stored.status === "queued" ? "admit" : "started";
    const busy = existing.find(
      (run) => run.stored.workflow === workflow.name && isActive(run.stored.status),
    );
    if (busy !== undefined) {
      await reply(
        gh,
        repo,
        issue.number,
        `ClusterCode: run \`${busy.stored.runId}\` of ${workflow.name} is still active on this issue; \`/cancel\` it first or wait for it to end.`,
      );
      return "busy";
    }
    const brief =
      request.brief === undefined
        ? buildBrief(issue.title, issue.body)
        : { text: request.brief, removed: buildBrief("", "").removed };
    const definition: RunDefinition = {
      runId,
      trigger: request.key,
      source: { path: file.path, sha: file.sha },
      workflow,
      baseBranch: repo.defaultBranch,
      branch: runBranch(issue.number, runId),
      brief: brief.text,
      briefCleaned: { ...brief.removed },
      startedBy: actor,
      engines: resolveEngines(workflow),
    };
    const now = this.deps.now();
    const document: RunDocument = { definition, state: createSnapshot(definition, now) };
    const created = await createRun(
      this.deps.store,
      {
        runId,
        version: 1,
        repo: repoName,
        workflow: workflow.name,
        status: "queued",
        snapshot: storedDocument(document),
        outbox: [],
        createdAt: now,
        updatedAt: now,
        issue: issue.number,
      },
      workflow,
    );
    return created ? "admit" : "started";
  }

  /** Starts a queued run when admission allows it now; else shows it queued. */
  async #admit(repoName: string, workflow: Workflow, runId: string): Promise<void> {
    const { admission, runtime } = this.deps;
    if (!(await admission.admit(repoName, workflow, runId, runtime))) this.deps.onCreated(runId);
  }
}

/** A trigger lock's lease, how long to wait between tries, and how many tries (over the lease). */
const LOCK_MS = 30_000;
const LOCK_WAIT_MS = 200;
const LOCK_ATTEMPTS = Math.ceil(LOCK_MS / LOCK_WAIT_MS) + 5;

/** The id of the run a trigger (by its idempotency key) starts for a workflow. */
export function runIdOf(key: string, workflow: string): string {
  return `r${createHash("sha256").update(`${key}\n${workflow}`).digest("hex").slice(0, 12)}`;
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
