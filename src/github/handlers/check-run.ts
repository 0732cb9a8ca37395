import { repoOf } from "../github.js";
import { parseCheckId } from "../render-checks.js";
import type { HandlerContext, RepositoryPayload } from "../services.js";

/** The fields of a `check_run` event the app reads. */
export interface CheckRunPayload extends RepositoryPayload {
  action: string;
  check_run: {
    external_id: string | null;
    html_url: string | null;
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

/** `check_run.requested_action`: the Approve/Reject buttons of an approval's check run. */
export async function onCheckRun(payload: CheckRunPayload, ctx: HandlerContext): Promise<void> {
  const button = buttonOf(payload);
  if (button === undefined) return;
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
