import type { IssueCommentCreatedEvent, IssuesLabeledEvent } from "@octokit/webhooks-types";
import { payloadOf } from "./harness.js";

/** A build and an approval gate: the smallest workflow that parks a run for an answer. */
export const SHIP_WORKFLOW = `version: 1
name: ship
on:
  label: clustercode
nodes:
  build:
    kind: run
    run: echo built > out.txt
  gate:
    kind: approval
edges:
  - { from: build, to: gate }
  - { from: gate, to: done, label: approved }
  - { from: gate, to: failed, label: rejected }
`;

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

/** `issue_comment.created`: `login` (a person, or a bot) comments `body` on an issue. */
export function commentOn(
  issue: number,
  body: string,
  login: string,
  options: { bot?: boolean } = {},
): IssueCommentCreatedEvent {
  return payloadOf<IssueCommentCreatedEvent>("issue_comment", "created", (p) => {
    p.issue.number = issue;
    delete p.issue.pull_request;
    p.comment.body = body;
    p.comment.user.login = login;
    p.sender.login = login;
    p.sender.type = options.bot === true ? "Bot" : "User";
  });
}
