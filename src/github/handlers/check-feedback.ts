import { callGitHub, isNotFound } from "../client/errors.js";
import type { GitHub, RepoRef } from "../client/github.js";
import { truncateText } from "../client/limits.js";
import { FEEDBACK_DETAIL_LIMIT } from "../../engine/feedback-log.js";
import type { UntimedFeedback } from "./review-feedback.js";

/** Conclusions of a check run that failed the commit. */
const FAILED = new Set(["failure", "timed_out", "action_required"]);
/** How many failing check runs of a suite are told, and annotations of each. */
const MAX_RUNS = 10;
const MAX_ANNOTATIONS = 50;
/**
 * How much of a failed GitHub Actions job's log is told: its tail, in bytes, within what a node
 * is told of one feedback item (the engine keeps an item's last FEEDBACK_DETAIL_LIMIT chars).
 */
export const LOG_TAIL_BYTES = 2_000;
/** How much of one check run's feedback (log tail, title, summary, annotations) is sent. */
const MAX_DETAIL_BYTES = FEEDBACK_DETAIL_LIMIT;

/**
 * The failing check runs of a check suite as feedback: each one's name, title, summary and
 * annotations (Checks API), and for GitHub Actions the failed job's log tail (Actions API).
 * Untrusted text (CI output), bounded.
 */
export async function checkSuiteFeedback(
  gh: GitHub,
  repo: RepoRef,
  suite: { id: number; head_sha: string; app: { slug?: string } | null },
): Promise<UntimedFeedback[]> {
  const { data } = await callGitHub(`list the check runs of suite ${suite.id}`, () =>
    gh.request("GET /repos/{owner}/{repo}/check-suites/{check_suite_id}/check-runs", {
      owner: repo.owner,
      repo: repo.repo,
      check_suite_id: suite.id,
      filter: "latest",
      per_page: 100,
    }),
  );
  const failing = data.check_runs
    .filter((run) => FAILED.has(run.conclusion ?? ""))
    .slice(0, MAX_RUNS);
  const items: UntimedFeedback[] = [];
  for (const run of failing) {
    const parts: string[] = [];
    // The log tail first: what the engine cuts when an item is long is its beginning.
    if (suite.app?.slug === "github-actions") {
      const tail = await jobLogTail(gh, repo, Number(run.id));
      if (tail !== undefined) parts.push(`Log tail:\n${tail}`);
    }
    if (run.output.title) parts.push(run.output.title);
    if (run.output.summary) parts.push(run.output.summary);
    if (run.output.annotations_count > 0) {
      const { data: annotations } = await callGitHub(`read the annotations of ${run.name}`, () =>
        gh.request("GET /repos/{owner}/{repo}/check-runs/{check_run_id}/annotations", {
          owner: repo.owner,
          repo: repo.repo,
          check_run_id: run.id,
          per_page: MAX_ANNOTATIONS,
        }),
      );
      parts.push(
        ...annotations.map(
          (a) =>
            `${a.path}:${a.start_line} ${a.annotation_level ?? "failure"}: ${a.title ? `${a.title}: ` : ""}${a.message ?? ""}`,
        ),
      );
    }
    items.push({
      source: "check",
      label: run.conclusion ?? "failure",
      summary: `check ${run.name} failed on ${suite.head_sha.slice(0, 12)}`,
      ...(parts.length === 0 ? {} : { detail: truncateText(parts.join("\n\n"), MAX_DETAIL_BYTES) }),
      ...(run.html_url === null ? {} : { url: run.html_url }),
      headSha: suite.head_sha,
    });
  }
  return items;
}

/**
 * The last LOG_TAIL_BYTES of a GitHub Actions job's log (a job's id is its check run's id);
 * undefined when the log is gone (expired, or not readable).
 */
async function jobLogTail(gh: GitHub, repo: RepoRef, jobId: number): Promise<string | undefined> {
  try {
    const { data } = await callGitHub(`read the log of job ${jobId}`, () =>
      gh.request("GET /repos/{owner}/{repo}/actions/jobs/{job_id}/logs", {
        owner: repo.owner,
        repo: repo.repo,
        job_id: jobId,
      }),
    );
    const text = typeof data === "string" ? data : String(data);
    const bytes = Buffer.from(text, "utf8");
    return bytes.length <= LOG_TAIL_BYTES
      ? text
      : `…${bytes.subarray(bytes.length - LOG_TAIL_BYTES).toString("utf8")}`;
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}
