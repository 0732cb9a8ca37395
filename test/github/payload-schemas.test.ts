import { describe, expect, it } from "vitest";
import { checkPayload, PAYLOAD_SCHEMAS } from "../../src/github/intake/payload-schemas.js";
import { webhookExamples } from "./helpers/examples.js";
import { commentOn, labeledIssue } from "./helpers/payloads.js";

describe("the payload fields the handlers read", () => {
  it("fit every real webhook example of every routed event", () => {
    const misfits: string[] = [];
    for (const event of Object.keys(PAYLOAD_SCHEMAS)) {
      const examples = webhookExamples(event);
      expect(examples.length, event).toBeGreaterThan(0);
      for (const example of examples) {
        try {
          checkPayload(event, example);
        } catch (error) {
          misfits.push(`${event}.${String(example.action)}: ${(error as Error).message}`);
        }
      }
    }
    expect(misfits).toEqual([]);
  });

  it("refuses a payload missing one or mistyping one, saying which field and why", () => {
    const mistyped = labeledIssue(7) as unknown as { issue: { number: unknown } };
    mistyped.issue.number = "7";
    expect(() => checkPayload("issues", mistyped)).toThrow(
      "refused the issues payload: issue.number: Invalid input: expected number, received string",
    );
    const missing = commentOn(7, "/approve", "bob") as unknown as { comment: { user?: unknown } };
    delete missing.comment.user;
    expect(() => checkPayload("issue_comment", missing)).toThrow(
      /^refused the issue_comment payload: comment\.user: Invalid input: expected object, received undefined$/,
    );
    expect(() => checkPayload("issues", null)).toThrow(
      /^refused the issues payload: \(payload\): /,
    );
    expect(() => checkPayload("ping", null)).not.toThrow();
  });
});
