import { parseCommand, type CommentCommand } from "./commands.js";
import { repoOf } from "../client/github.js";
import { reply } from "../client/replies.js";
import type { HandlerContext, RepositoryPayload } from "./services.js";

/** The fields of an `issue_comment` event the app reads. */
export interface IssueCommentPayload extends RepositoryPayload {
  action: string;
  issue: { number: number; title: string; body?: string | null; pull_request?: unknown };
  comment: { body: string; html_url: string; user: { login: string; type: string } };
}

/**
 * The command of a new comment by a person; undefined for anything else. A command in an
 * edited comment is refused with a reason: an edit could turn an old comment into an approval.
 */
export function commandOf(payload: IssueCommentPayload): CommentCommand | undefined {
  if (payload.sender.type !== "User") return undefined;
  if (payload.action === "edited" && parseCommand(payload.comment.body) !== undefined) {
    return {
      kind: "invalid",
      message:
        "ClusterCode reads commands only in new comments, never in edited ones: post the command again as a new comment.",
    };
  }
  if (payload.action !== "created") return undefined;
  return parseCommand(payload.comment.body);
}

/**
 * `issue_comment.created` from a human: `/clustercode run|status`, `/approve`, `/reject`,
 * `/cancel`, `/retry`, `/resolve`, `/rework`. Edits get a reply saying so and count for nothing; deletions
 * and bots' comments are ignored (a reply to a bot could start two bots answering each other).
 */
export async function onIssueComment(
  payload: IssueCommentPayload,
  ctx: HandlerContext,
): Promise<void> {
  const command = commandOf(payload);
  if (command === undefined) return;
  const repo = repoOf(payload);
  const { issue } = payload;
  if (command.kind === "invalid") {
    await reply(ctx.gh, repo, issue.number, `@${payload.sender.login} ${command.message}`);
  } else if (command.kind === "run") {
    await ctx.services.starter.trigger({
      gh: ctx.gh,
      repo,
      issue: { number: issue.number, title: issue.title, body: issue.body },
      actor: payload.sender.login,
      key: ctx.deliveryId,
      select:
        command.workflow === undefined
          ? { by: "command" }
          : { by: "command", workflow: command.workflow },
      checkActor: true,
    });
  } else {
    const speaker = {
      gh: ctx.gh,
      repo,
      issue: issue.number,
      actor: payload.sender.login,
      where: payload.comment.html_url,
    };
    await ctx.services.answers.onCommand(speaker, command, issue.pull_request !== undefined);
  }
}
