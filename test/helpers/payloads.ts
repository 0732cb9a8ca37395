/**
 * The one place webhook payloads are built: real examples from `@octokit/webhooks-examples`,
 * moved into the scenario's repository and installation, then adjusted by the test.
 */
import { createRequire } from "node:module";
import type {
  IssueCommentCreatedEvent,
  IssuesLabeledEvent,
  PullRequestReviewSubmittedEvent,
} from "@octokit/webhooks-types";

interface ExampleGroup {
  name: string;
  examples: Record<string, unknown>[];
}

const require = createRequire(import.meta.url);
const groups = require("@octokit/webhooks-examples/api.github.com/index.json") as ExampleGroup[];

/** The repository every scenario plays in (the webhook examples' Codertocat/Hello-World). */
export const OWNER = "Codertocat";
export const REPO = "Hello-World";

/**
 * A deep copy of the first real webhook example of `event` (with `action`, when given), typed
 * by the caller as the event's payload type from `@octokit/webhooks-types`.
 */
export function webhookExample<T>(event: string, action?: string): T {
  const group = groups.find((candidate) => candidate.name === event);
  const example = group?.examples.find(
    (candidate) => action === undefined || candidate.action === action,
  );
  if (example === undefined) throw new Error(`no webhook example for ${event}.${action ?? "*"}`);
  return structuredClone(example) as T;
}

/** Every real webhook example of `event` (deep copies). */
export function webhookExamples(event: string): Record<string, unknown>[] {
  const group = groups.find((candidate) => candidate.name === event);
  return (group?.examples ?? []).map((example) => structuredClone(example));
}

/** The part of a payload every scenario adjusts. */
interface RepositoryPayload {
  repository: { name: string; full_name: string; owner: { login: string }; default_branch: string };
}

/** A payload from the webhook examples with the scenario's repository and installation. */
export function payloadOf<T extends RepositoryPayload>(
  event: string,
  action: string | undefined,
  change: (payload: T) => void,
): T {
  const payload = webhookExample<T>(event, action);
  (payload as { installation?: unknown }).installation = {
    id: 1,
    node_id: "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uMQ==",
  };
  payload.repository.name = REPO;
  payload.repository.full_name = `${OWNER}/${REPO}`;
  payload.repository.owner.login = OWNER;
  payload.repository.default_branch = "main";
  change(payload);
  return payload;
}

/** `issues.labeled`: a person puts `label` (default `clustercode`) on an issue. */
export function labeledIssue(
  issue: number,
  login = "alice",
  change: (payload: IssuesLabeledEvent) => void = () => undefined,
): IssuesLabeledEvent {
  return payloadOf<IssuesLabeledEvent>("issues", "labeled", (p) => {
    if (p.label !== undefined) p.label.name = "clustercode";
    p.issue.number = issue;
    p.sender.login = login;
    p.sender.type = "User";
    change(p);
  });
}

/** How a comment differs from a person's comment on an issue. */
export interface CommentOptions {
  /** A bot's comment. */
  bot?: boolean;
  /** On a pull request (GitHub sends those as issue comments with `issue.pull_request`). */
  pull?: boolean;
  /** The comment's URL; default `…/issues/<issue>#issuecomment-1`. */
  url?: string;
}

/** `issue_comment.created`: `login` (a person, or a bot) comments `body` on an issue or PR. */
export function commentOn(
  issue: number,
  body: string,
  login: string,
  options: CommentOptions = {},
): IssueCommentCreatedEvent {
  return payloadOf<IssueCommentCreatedEvent>("issue_comment", "created", (p) => {
    p.issue.number = issue;
    if (options.pull === true) {
      const url = `https://api.github.com/repos/${OWNER}/${REPO}/pulls/${issue}`;
      p.issue.pull_request = { url, html_url: url, diff_url: url, patch_url: url };
    } else delete p.issue.pull_request;
    p.comment.body = body;
    p.comment.html_url =
      options.url ?? `https://github.com/${OWNER}/${REPO}/issues/${issue}#issuecomment-1`;
    p.comment.user.login = login;
    p.sender.login = login;
    p.sender.type = options.bot === true ? "Bot" : "User";
  });
}

/** `pull_request_review.submitted`: `login` reviews pull `pull` of `branch`, approving by default. */
export function reviewOf(
  pull: number,
  branch: string,
  login = "bob",
  change: (payload: PullRequestReviewSubmittedEvent) => void = () => undefined,
): PullRequestReviewSubmittedEvent {
  return payloadOf<PullRequestReviewSubmittedEvent>("pull_request_review", "submitted", (p) => {
    p.pull_request.number = pull;
    p.pull_request.head.ref = branch;
    p.review.state = "approved";
    p.review.user.login = login;
    p.sender.login = login;
    p.sender.type = "User";
    change(p);
  });
}
