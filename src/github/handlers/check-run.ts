import { repoOf } from "../client/github.js";
import { parseCheckId } from "../surfaces/render-checks.js";
import { parseRunBranch } from "../../runtime/issue-runs.js";
import type { HandlerContext, RepositoryPayload } from "./services.js";

/** The fields of a `check_run` event the app reads. */
export interface CheckRunPayload extends RepositoryPayload {
  action: string;
  check_run: {
    name?: string;
    external_id: string | null;
    html_url: string | null;
    head_sha?: string;
    conclusion?: string | null;
    check_suite?: { head_branch: string | null } | null;
    pull_requests: { number: number }[];
  };
  requested_action?: { identifier: string } | null;
}

/** The Approve or Reject button pressed on a run's check run; undefined for anything else. */
export function buttonOf(
  payload: CheckRunPayload,
): { identifier: "approve" | "reject"; runId: string; visit?: number } | undefined {
  const identifier = payload.requested_action?.identifier;
  const externalId = payload.check_run.external_id;
  if (payload.action !== "requested_action" || externalId === null || externalId === "")
    return undefined;
  if (identifier !== "approve" && identifier !== "reject") return undefined;
  return { identifier, ...parseCheckId(externalId) };
}

/** Conclusions that mean a check failed on the commit. */
const FAILED = new Set(["failure", "timed_out"]);

/**
 * The run whose branch another check (CI, not one of ClusterCode's own) failed on; undefined
 * for anything else.
 */
export function failedRunCheckOf(payload: CheckRunPayload): string | undefined {
  const { check_run: check } = payload;
  if (payload.action !== "completed" || !FAILED.has(check.conclusion ?? "")) return undefined;
  if (check.name === undefined || check.name.startsWith("ClusterCode")) return undefined;
  const branch = check.check_suite?.head_branch;
  return branch === null || branch === undefined ? undefined : parseRunBranch(branch)?.runId;
}

/** `check_run.completed` failing on a run's branch: the run records it for the scorecard. */
async function onFailedRunCheck(payload: CheckRunPayload, ctx: HandlerContext): Promise<void> {
  const runId = failedRunCheckOf(payload);
  if (runId === undefined) return;
  const { check_run: check } = payload;
  await ctx.services.answers.observe(repoOf(payload), runId, {
    what: "ci.failed",
    ...(check.name === undefined ? {} : { check: check.name }),
    ...(check.head_sha === undefined ? {} : { sha: check.head_sha }),
    ...(check.html_url === null ? {} : { where: check.html_url }),
  });
}

/** `check_run.requested_action`: the Approve/Reject buttons of an approval's check run. */
export async function onCheckRun(payload: CheckRunPayload, ctx: HandlerContext): Promise<void> {
  const button = buttonOf(payload);
  if (button === undefined) return onFailedRunCheck(payload, ctx);
  const { identifier, runId, visit } = button;
  const run = await ctx.services.answers.issueOf(runId);
  if (run === undefined) return;
  await ctx.services.answers.answerApproval(
    {
      gh: ctx.gh,
      repo: repoOf(payload),
      issue: run,
      actor: payload.sender.login,
      where: payload.check_run.html_url ?? "",
    },
    runId,
    identifier === "approve" ? "approved" : "rejected",
    undefined,
    // Only an approval's own check run has buttons; without a visit the id names no approval.
    visit ?? -1,
  );
}
