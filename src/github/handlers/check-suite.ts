import { checkSuiteFeedback } from "./check-feedback.js";
import { repoOf } from "../client/github.js";
import { parseRunBranch } from "../../runtime/issue-runs.js";
import type { HandlerContext, RepositoryPayload } from "./services.js";

/** The fields of a `check_suite` event the app reads. */
export interface CheckSuitePayload extends RepositoryPayload {
  action: string;
  check_suite: {
    id: number;
    head_sha: string;
    head_branch: string | null;
    conclusion: string | null;
    app: { slug?: string } | null;
  };
}

/** The run whose branch a check suite completed `failure` on; undefined for anything else. */
export function failedSuiteRunOf(payload: CheckSuitePayload): string | undefined {
  const { action, check_suite: suite } = payload;
  if (action !== "completed" || suite.conclusion !== "failure") return undefined;
  return suite.head_branch === null ? undefined : parseRunBranch(suite.head_branch)?.runId;
}

/**
 * `check_suite.completed` failing on a run's head, from another app (CI, not ClusterCode): a
 * run that succeeded goes back to its `rework.node` with the failing check runs as feedback,
 * once per head commit (duplicated deliveries and replicas send it back once).
 */
export async function onCheckSuite(payload: CheckSuitePayload, ctx: HandlerContext): Promise<void> {
  const runId = failedSuiteRunOf(payload);
  if (runId === undefined) return;
  const { check_suite: suite } = payload;
  const ours = await ctx.services.installations.botLogin();
  if (suite.app?.slug !== undefined && `${suite.app.slug}[bot]` === ours) return;
  const repo = repoOf(payload);
  const { answers } = ctx.services;
  if (!(await answers.succeededAt(repo, runId, suite.head_sha))) return;
  if (!(await answers.once(`rework/${runId}/${suite.head_sha}`, ctx.deliveryId))) return;
  const feedback = await checkSuiteFeedback(ctx.gh, repo, suite);
  await answers.sendBack(runId, {
    source: "check",
    headSha: suite.head_sha,
    ...(feedback[0]?.url === undefined ? {} : { where: feedback[0].url }),
    feedback:
      feedback.length > 0
        ? feedback
        : [
            {
              source: "check",
              label: "failure",
              summary: `a check suite failed on ${suite.head_sha.slice(0, 12)}`,
              headSha: suite.head_sha,
            },
          ],
  });
}
