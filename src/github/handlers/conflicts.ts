import type { Answers } from "./answers.js";
import type { GitHub, RepoRef } from "../client/github.js";
import { conflictsWithBase } from "../surfaces/pull-requests.js";

/** A run's pull request to check against its base, and who asks (for the once key). */
export interface ConflictCheck {
  gh: GitHub;
  repo: RepoRef;
  runId: string;
  pull: number;
  /** The head the check is about: only a run that succeeded there is sent back. */
  sha: string;
  /** Whoever claims the once key: a delivery id, or the sync of a run. */
  holder: string;
  where?: string;
}

/**
 * A run that succeeded whose pull request no longer merges with its base goes back to its
 * `rework.node`, once per head commit, told that the base conflicts. Nothing when GitHub has
 * not worked out mergeability yet.
 */
export async function sendBackIfConflicting(answers: Answers, check: ConflictCheck): Promise<void> {
  const { gh, repo, runId, pull, sha } = check;
  if (!(await answers.succeededAt(repo, runId, sha))) return;
  const merge = await conflictsWithBase(gh, repo, pull);
  if (merge?.conflicts !== true || merge.headSha !== sha) return;
  if (!(await answers.once(`conflict/${runId}/${sha}`, check.holder))) return;
  await answers.sendBack(runId, {
    source: "conflict",
    headSha: sha,
    ...(check.where === undefined ? {} : { where: check.where }),
    feedback: [
      {
        source: "conflict",
        label: "conflict",
        summary: `the run branch no longer merges with its base (GitHub says it conflicts at ${sha.slice(0, 12)})`,
        detail:
          "Merge or rebase onto the base branch and resolve the conflicting files, then make the checks pass again.",
        headSha: sha,
      },
    ],
  });
}
