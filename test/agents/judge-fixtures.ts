import type { JudgeContext, JudgeRequest } from "../../src/agents/judge-types.js";

/** A decision's judge request, as the engine emits it. */
export function decisionRequest(provider: "anthropic" | "openai", model: string): JudgeRequest {
  return {
    seq: 7,
    type: "judge.request",
    requestId: "j7",
    node: "review",
    question: "Does the change satisfy the issue's requirement?",
    labels: ["approved", "needs-changes"],
    judge: { provider, model },
    branch: "clustercode/1-r1",
    baseBranch: "main",
  };
}

/** What the runtime gathers for that request. */
export const CONTEXT: JudgeContext = {
  brief: "Fix the off-by-one in pagination.",
  diff: "diff --git a/page.ts b/page.ts\n-  return items.slice(0, n - 1)\n+  return items.slice(0, n)\n",
  evidence: [{ at: 1, kind: "loop.iteration", node: "implement", iteration: 1, failedGates: [] }],
};

/** Fake API keys for tests: nock answers every request, nothing leaves the machine. */
export const TEST_ENV = {
  ANTHROPIC_API_KEY: "test-anthropic-key",
  OPENAI_API_KEY: "test-openai-key",
  ANTHROPIC_BASE_URL: "https://anthropic.test",
  OPENAI_BASE_URL: "https://openai.test/v1",
};
