import { repoOf } from "../client/github.js";
import type { HandlerContext, RepositoryPayload } from "./services.js";

/** The fields of an `issues` event the app reads. */
export interface IssuesPayload extends RepositoryPayload {
  action: string;
  issue: { number: number; title: string; body?: string | null; pull_request?: unknown };
  label?: { name: string };
}

/** The label a person put on an issue (which may be a workflow's trigger); else undefined. */
export function labelOf(payload: IssuesPayload): string | undefined {
  if (payload.action !== "labeled" || payload.sender.type === "Bot") return undefined;
  return payload.label?.name;
}

/** `issues.labeled`: a label may be a workflow's trigger. */
export async function onIssues(payload: IssuesPayload, ctx: HandlerContext): Promise<void> {
  const label = labelOf(payload);
  if (label === undefined) return;
  await ctx.services.starter.trigger({
    gh: ctx.gh,
    repo: repoOf(payload),
    issue: { number: payload.issue.number, title: payload.issue.title, body: payload.issue.body },
    actor: payload.sender.login,
    key: ctx.deliveryId,
    select: { by: "label", label },
    checkActor: true,
  });
}
