import type { RunEvent } from "../../engine/model.js";
import type { Performer } from "./performer.js";

/** Adds to the daily ledger of the run's repository and workflow; answers with the total. */
export const addToLedger: Performer<"ledger.add"> = async (context, effect) => {
  const { store, runs, runId } = context;
  const repo = await runs.repoOf(runId);
  // Keyed by the effect, so that performing it again (after a lost answer or a crash before its
  // receipt) adds nothing; a check (0) needs no key, and a re-asked one has none.
  const totalUsd = await store.addCost(
    `${repo ?? "unknown"}#${effect.workflow}`,
    effect.day,
    effect.usd,
    ...(effect.usd === 0 ? [] : [`${runId}/${effect.seq}`]),
  );
  const { requestId } = effect;
  const follow: RunEvent[] =
    requestId === undefined
      ? []
      : [{ type: "ledger.total", requestId, totalUsd, at: context.now() }];
  return { receipt: { totalUsd }, follow };
};
