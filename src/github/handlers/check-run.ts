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

/** `check_run.requested_action`: the Approve/Reject buttons of an approval's check run. */
export async function onCheckRun(payload: CheckRunPayload, ctx: HandlerContext): Promise<void> {
  const identifier = payload.requested_action?.identifier;
  if (
    payload.action !== "requested_action" ||
    (identifier !== "approve" && identifier !== "reject")
  )
    return;
  const externalId = payload.check_run.external_id;
  if (externalId === null || externalId === "") return;
  const { runId, visit } = parseCheckId(externalId);
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
