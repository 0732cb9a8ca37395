import type { DeliveryRecord } from "../store/store.js";
import { onCheckRun, type CheckRunPayload } from "./handlers/check-run.js";
import { onInstallation, type InstallationPayload } from "./handlers/installation.js";
import { onIssueComment, type IssueCommentPayload } from "./handlers/issue-comment.js";
import { onIssues, type IssuesPayload } from "./handlers/issues.js";
import {
  onPullRequestReview,
  type PullRequestReviewPayload,
} from "./handlers/pull-request-review.js";
import { onPullRequest, type PullRequestPayload } from "./handlers/pull-request.js";
import { onPush, type PushPayload } from "./handlers/push.js";
import type { HandlerContext } from "./services.js";

/** Hands a recorded delivery to the handler of its event; other events are ignored. */
export async function routeDelivery(delivery: DeliveryRecord, ctx: HandlerContext): Promise<void> {
  const payload = delivery.payload;
  switch (delivery.event) {
    case "issues":
      return onIssues(payload as IssuesPayload, ctx);
    case "issue_comment":
      return onIssueComment(payload as IssueCommentPayload, ctx);
    case "pull_request":
      return onPullRequest(payload as PullRequestPayload, ctx);
    case "pull_request_review":
      return onPullRequestReview(payload as PullRequestReviewPayload, ctx);
    case "check_run":
      return onCheckRun(payload as CheckRunPayload, ctx);
    case "push":
      return onPush(payload as PushPayload, ctx);
    case "installation":
    case "installation_repositories":
      return onInstallation(payload as InstallationPayload, ctx);
    default:
      return;
  }
}
