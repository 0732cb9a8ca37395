import type { Performer } from "./performer.js";

/**
 * Moves the run branch onto a prototype race's winner through the hub's git, which holds the
 * repository's credentials. Idempotent under the effect's `runId/seq` key: performed again after
 * a crash (the move done, its receipt not written), it finds the run branch already at or past
 * the winner's head and leaves it; a move that did not happen is made then.
 */
export const moveRunBranch: Performer<"branch.move"> = async ({ hub, runId }, effect) => {
  const moved = await hub.moveBranch(runId, {
    branch: effect.branch,
    from: effect.from,
    ...(effect.sha === undefined ? {} : { sha: effect.sha }),
  });
  return { receipt: moved };
};
