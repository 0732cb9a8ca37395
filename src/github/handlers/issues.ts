import { repoOf } from "../github.js";
import type { HandlerContext, RepositoryPayload } from "../services.js";

/** The fields of an `issues` event the app reads. */
export interface IssuesPayload extends RepositoryPayload {
  action: string;
  issue: { number: number; title: string; body?: string | null; pull_request?: unknown };
  label?: { name: string };
}

/** `issues.labeled`: a label may be a workflow's trigger. */
export async function onIssues(payload: IssuesPayload, ctx: HandlerContext): Promise<void> {
  if (payload.action !== "labeled" || payload.label === undefined) return;
  if (payload.sender.type === "Bot") return;
  await ctx.services.starter.trigger({
    gh: ctx.gh,
    repo: repoOf(payload),
    issue: { number: payload.issue.number, title: payload.issue.title, body: payload.issue.body },
    actor: payload.sender.login,
    key: ctx.deliveryId,
    select: { by: "label", label: payload.label.name },
    checkActor: true,
  });
}
