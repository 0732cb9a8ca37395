import { createOnce, NO_PLUGIN_RETRY } from "../client/create-once.js";
import { callGitHub } from "../client/errors.js";
import type { GitHub, RepoRef } from "../client/github.js";
import type { CheckRunSpec } from "./render-checks.js";
import { fingerprint } from "./fingerprint.js";

/** What a run's check runs look like on GitHub, as far as this process knows. */
export interface CheckRunMemo {
  /**
   * external id (or `externalId@sha` for the run check) → check run id and the fingerprint of
   * what was last sent.
   */
  ids: Map<string, { id: number; digest: string; url: string }>;
  /** Whether the check runs another process (or replica) made were looked up. */
  listed: boolean;
}

/** A new, empty memo. */
export function newCheckRunMemo(): CheckRunMemo {
  return { ids: new Map(), listed: false };
}

/**
 * Creates or updates the check run `spec` on `headSha`, found by its external id (from the
 * memo, else from one listing of the check runs of each head the run has had: `head.sha` and
 * `head.earlier`), and skips the call when nothing changed. Returns its HTML URL.
 */
export async function upsertCheckRun(
  gh: GitHub,
  repo: RepoRef,
  memo: CheckRunMemo,
  spec: CheckRunSpec,
  head: { sha: string; earlier: readonly string[] },
): Promise<string> {
  const headSha = head.sha;
  const key = checkKey(spec.externalId, headSha);
  const digest = fingerprint(JSON.stringify(spec));
  // Listings find what a previous process created (a node's check run stays on the head it was
  // created on); anything later on was created by this process and is in the memo.
  if (!memo.ids.has(key) && !memo.listed) await rememberListedCheckRuns(gh, repo, memo, head);
  const known = memo.ids.get(key);
  if (known?.digest === digest) return known.url;
  const body = {
    owner: repo.owner,
    repo: repo.repo,
    name: spec.name,
    external_id: spec.externalId,
    status: spec.status,
    ...(spec.conclusion === undefined ? {} : { conclusion: spec.conclusion }),
    output: { title: spec.title, summary: spec.summary },
    ...(spec.actions === undefined ? {} : { actions: spec.actions }),
    ...(spec.detailsUrl === undefined ? {} : { details_url: spec.detailsUrl }),
  };
  if (known === undefined) {
    // A create GitHub did but answered 502 is found by its external id, not sent again.
    const created = await createOnce(
      async () => {
        const { data } = await callGitHub(`create check run ${spec.name}`, () =>
          gh.request("POST /repos/{owner}/{repo}/check-runs", {
            ...body,
            head_sha: headSha,
            ...NO_PLUGIN_RETRY,
          }),
        );
        return { id: Number(data.id), url: data.html_url ?? "" };
      },
      () => findCheckRun(gh, repo, spec.externalId, headSha),
    );
    memo.ids.set(key, { ...created, digest });
    return created.url;
  }
  await callGitHub(`update check run ${spec.name}`, () =>
    gh.request("PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}", {
      ...body,
      check_run_id: known.id,
    }),
  );
  memo.ids.set(key, { ...known, digest });
  return known.url;
}

/** Adds to the memo the app's check runs listed on each head the run has had, then marks it listed. */
async function rememberListedCheckRuns(
  gh: GitHub,
  repo: RepoRef,
  memo: CheckRunMemo,
  head: { sha: string; earlier: readonly string[] },
): Promise<void> {
  for (const sha of new Set([head.sha, ...head.earlier])) {
    for (const run of await listCheckRuns(gh, repo, sha)) {
      if (run.external_id === null || run.external_id === "") continue;
      const found = checkKey(run.external_id, sha);
      // A completed run check on an earlier head needs nothing more (it was superseded).
      const settled = found.includes("@") && sha !== head.sha && run.status === "completed";
      if (!memo.ids.has(found) && !settled) {
        memo.ids.set(found, { id: Number(run.id), digest: "", url: run.html_url ?? "" });
      }
    }
  }
  memo.listed = true;
}

/** The check run with `externalId` on `sha`, if GitHub has one. */
async function findCheckRun(
  gh: GitHub,
  repo: RepoRef,
  externalId: string,
  sha: string,
): Promise<{ id: number; url: string } | undefined> {
  const runs = await listCheckRuns(gh, repo, sha);
  const run = runs.find((candidate) => candidate.external_id === externalId);
  return run === undefined ? undefined : { id: Number(run.id), url: run.html_url ?? "" };
}

/**
 * Every check run of a commit, all pages: other apps' and CI's check runs share the listing, so
 * the app's own may be past the first 100.
 */
function listCheckRuns(gh: GitHub, repo: RepoRef, sha: string) {
  return callGitHub(`list check runs of ${sha}`, () =>
    gh.paginate("GET /repos/{owner}/{repo}/commits/{ref}/check-runs", {
      owner: repo.owner,
      repo: repo.repo,
      ref: sha,
      per_page: 100,
    }),
  );
}

/**
 * How the memo keys a check run: a node's check run keeps one id for the run (it is created
 * once), the run's own check run has one per head SHA (it follows the branch head).
 */
function checkKey(externalId: string, headSha: string): string {
  return externalId.includes("/") ? externalId : `${externalId}@${headSha}`;
}

/**
 * Completes the run's check runs on earlier heads (as neutral, "superseded") once the run's
 * check run moved to `headSha`, so no stale run check stays in progress on an old commit.
 */
export async function supersedeOldRunChecks(
  gh: GitHub,
  repo: RepoRef,
  memo: CheckRunMemo,
  runId: string,
  headSha: string,
): Promise<void> {
  for (const [key, known] of memo.ids) {
    if (!key.startsWith(`${runId}@`) || key === `${runId}@${headSha}`) continue;
    if (known.digest === SUPERSEDED) continue;
    await callGitHub(`supersede check run ${known.id}`, () =>
      gh.request("PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}", {
        owner: repo.owner,
        repo: repo.repo,
        check_run_id: known.id,
        status: "completed",
        conclusion: "neutral",
        output: {
          title: "Superseded",
          summary: `The run moved on to ${headSha}; its check run is there.`,
        },
      }),
    );
    memo.ids.set(key, { ...known, digest: SUPERSEDED });
  }
}

const SUPERSEDED = "superseded";
