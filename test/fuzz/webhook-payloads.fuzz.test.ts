import { randomUUID } from "node:crypto";
import { sign } from "@octokit/webhooks-methods";
import type {
  CheckRunRequestedActionEvent,
  InstallationCreatedEvent,
  PullRequestClosedEvent,
  PullRequestReviewSubmittedEvent,
  PushEvent,
} from "@octokit/webhooks-types";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SHIP_WORKFLOW, startTestApp, type TestApp } from "../github/helpers/harness.js";
import { commentOn, labeledIssue, payloadOf, webhookExample } from "../helpers/payloads.js";
import { runs } from "./fuzz-size.js";

/** Probot's webhook secret when none is configured, which the test app runs with. */
const SECRET = "development";

type Kind = "string" | "int" | "bool" | "object" | "array";

/** A field a handler reads: its type, and whether it may be absent or null. */
interface Field {
  path: string;
  kind: Kind;
  optional?: true;
  nullable?: true;
}

const REPOSITORY: Field[] = [
  { path: "repository", kind: "object" },
  { path: "repository.name", kind: "string" },
  { path: "repository.full_name", kind: "string" },
  { path: "repository.owner", kind: "object" },
  { path: "repository.owner.login", kind: "string" },
  { path: "repository.default_branch", kind: "string" },
  { path: "sender", kind: "object" },
  { path: "sender.login", kind: "string" },
  { path: "sender.type", kind: "string" },
  { path: "action", kind: "string" },
];
const ISSUE: Field[] = [
  { path: "issue", kind: "object" },
  { path: "issue.number", kind: "int" },
  { path: "issue.title", kind: "string" },
  { path: "issue.body", kind: "string", optional: true, nullable: true },
];

/**
 * Each routed event: a payload that would make the app act (a label no workflow uses, so no
 * run starts; an approval with nothing waiting), and the fields its handler reads.
 */
const EVENTS: { event: string; payload: () => object; fields: Field[] }[] = [
  {
    event: "issues",
    payload: () =>
      labeledIssue(31, "alice", (p) => {
        if (p.label !== undefined) p.label.name = "not-a-trigger";
      }),
    fields: [
      ...REPOSITORY,
      ...ISSUE,
      { path: "label", kind: "object", optional: true },
      { path: "label.name", kind: "string" },
    ],
  },
  {
    event: "issue_comment",
    payload: () => commentOn(32, "/approve", "alice"),
    fields: [
      ...REPOSITORY,
      ...ISSUE,
      { path: "comment", kind: "object" },
      { path: "comment.body", kind: "string" },
      { path: "comment.html_url", kind: "string" },
      { path: "comment.user", kind: "object" },
      { path: "comment.user.login", kind: "string" },
      { path: "comment.user.type", kind: "string" },
    ],
  },
  {
    event: "pull_request_review",
    payload: () =>
      payloadOf<PullRequestReviewSubmittedEvent>("pull_request_review", "submitted", (p) => {
        p.pull_request.head.ref = "clustercode/33-rnotarun";
        p.review.state = "approved";
        p.sender.type = "User";
      }),
    fields: [
      ...REPOSITORY,
      { path: "pull_request", kind: "object" },
      { path: "pull_request.number", kind: "int" },
      { path: "pull_request.head", kind: "object" },
      { path: "pull_request.head.ref", kind: "string" },
      { path: "pull_request.head.repo", kind: "object", nullable: true },
      { path: "pull_request.base.repo.full_name", kind: "string" },
      { path: "review", kind: "object" },
      { path: "review.state", kind: "string" },
      { path: "review.body", kind: "string", optional: true, nullable: true },
      { path: "review.html_url", kind: "string" },
      { path: "review.user", kind: "object", nullable: true },
    ],
  },
  {
    event: "check_run",
    payload: () =>
      payloadOf<CheckRunRequestedActionEvent>("check_run", "requested_action", (p) => {
        p.check_run.external_id = "rnotarun/1";
        p.requested_action = { identifier: "approve" };
        p.sender.type = "User";
      }),
    fields: [
      ...REPOSITORY,
      { path: "check_run", kind: "object" },
      { path: "check_run.external_id", kind: "string", nullable: true },
      { path: "check_run.html_url", kind: "string", nullable: true },
      { path: "check_run.pull_requests", kind: "array" },
      { path: "requested_action", kind: "object", optional: true, nullable: true },
      { path: "requested_action.identifier", kind: "string" },
    ],
  },
  {
    event: "pull_request",
    payload: () =>
      payloadOf<PullRequestClosedEvent>("pull_request", "closed", (p) => {
        p.pull_request.head.ref = "clustercode/34-rnotarun";
      }),
    fields: [
      ...REPOSITORY,
      { path: "number", kind: "int" },
      { path: "pull_request", kind: "object" },
      { path: "pull_request.head", kind: "object" },
      { path: "pull_request.head.sha", kind: "string" },
      { path: "pull_request.head.ref", kind: "string" },
      { path: "pull_request.merged", kind: "bool", optional: true, nullable: true },
    ],
  },
  {
    event: "push",
    payload: () =>
      payloadOf<PushEvent>("push", undefined, (p) => {
        p.ref = "refs/heads/main";
        p.commits = [
          { ...p.commits[0], added: [], removed: [], modified: [".clustercode/workflow.yml"] },
        ] as PushEvent["commits"];
      }),
    fields: REPOSITORY.filter((field) => field.path !== "action").concat([
      { path: "ref", kind: "string" },
      { path: "after", kind: "string" },
      { path: "commits", kind: "array" },
    ]),
  },
  {
    event: "installation",
    payload: () => {
      const p = webhookExample<InstallationCreatedEvent>("installation", "created");
      return { ...p, installation: { ...p.installation, id: 1 } };
    },
    fields: [
      { path: "action", kind: "string" },
      { path: "repositories", kind: "array", optional: true },
    ],
  },
];

/** Values of every other type than `field` may have. */
function wrongValues(field: Field): unknown[] {
  const all: Record<Kind, unknown> = {
    string: "7",
    int: 7,
    bool: true,
    object: { x: 1 },
    array: [1],
  };
  const wrong = Object.entries(all)
    .filter(([kind]) => kind !== field.kind)
    .map(([, value]) => value);
  if (field.kind === "int") wrong.push(1.5);
  if (field.nullable !== true) wrong.push(null);
  return wrong;
}

/** One change to a payload: a field removed, or given a value of another type. */
interface Mutation {
  field: Field;
  value?: { is: unknown };
}

function apply(payload: object, { field, value }: Mutation): boolean {
  const keys = field.path.split(".");
  const last = keys.pop() ?? "";
  let holder: unknown = payload;
  for (const key of keys) {
    holder = (holder as Record<string, unknown> | null)?.[key];
  }
  if (typeof holder !== "object" || holder === null || Array.isArray(holder)) return false;
  const record = holder as Record<string, unknown>;
  if (!(last in record)) return false;
  if (value === undefined) delete record[last];
  else record[last] = value.is;
  return true;
}

const cases = fc.constantFrom(...EVENTS).chain((spec) =>
  fc.record({
    spec: fc.constant(spec),
    mutations: fc.array(
      fc.constantFrom(...spec.fields).chain((field) =>
        fc.oneof(
          fc.constant<Mutation>({ field }),
          fc.constantFrom(...wrongValues(field)).map<Mutation>((is) => ({ field, value: { is } })),
        ),
      ),
      { minLength: 1, maxLength: 3 },
    ),
  }),
);

describe("webhook payloads with fields missing or of the wrong type, signed, through Probot", () => {
  let app: TestApp;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  beforeAll(async () => {
    app = await startTestApp(SHIP_WORKFLOW);
    app.github.permissions.set("alice", "write");
    process.on("unhandledRejection", onUnhandled);
  });
  afterAll(async () => {
    process.off("unhandledRejection", onUnhandled);
    await app.close();
  });

  it(
    "never crash a handler, and each is refused with a logged reason",
    { timeout: 120_000 },
    async () => {
      await fc.assert(
        fc.asyncProperty(cases, async ({ spec, mutations }) => {
          const payload = spec.payload();
          const applied = mutations.filter((mutation) => apply(payload, mutation));
          // Refused when a change that stands (no later one replaced the field or what holds it)
          // removes a field that must be there, or mistypes one.
          const refused = applied.some(
            (mutation, i) =>
              (mutation.value !== undefined || mutation.field.optional !== true) &&
              !applied
                .slice(i + 1)
                .some(({ field }) => `${mutation.field.path}.`.startsWith(`${field.path}.`)),
          );
          const id = randomUUID();
          const body = JSON.stringify(payload);
          await app.probot.webhooks.verifyAndReceive({
            id,
            name: spec.event,
            payload: body,
            signature: await sign(SECRET, body),
          });
          await app.host.idle();
          const logged = app.errors.filter((line) => line.startsWith(`delivery ${id} `));
          const refusal = `delivery ${id} (${spec.event}): refused the ${spec.event} payload: `;
          const what = `${spec.event} with ${JSON.stringify(mutations.map((m) => [m.field.path, m.value]))}: ${logged.join("; ")}`;
          if (refused)
            expect(
              logged.some((line) => line.startsWith(refusal)),
              what,
            ).toBe(true);
          else expect(logged.filter((line) => line.startsWith(refusal))).toEqual([]);
          // Whatever else was logged is the app's own refusal or GitHub's answer, never a crash.
          for (const line of logged) expect(line).not.toMatch(/TypeError|Cannot read properties/);
          expect(unhandled).toEqual([]);
        }),
        { numRuns: runs(150, 3_000) },
      );
      expect(app.github.problems).toEqual([]);
    },
  );
});
