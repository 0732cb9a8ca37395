import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runs } from "../fuzz/fuzz-size.js";
import { type TestApp } from "../github/helpers/harness.js";
import {
  approvals,
  deliverAll,
  labels,
  runsOf,
  startShipApp,
  shuffled,
  waitForRuns,
  type Delivery,
} from "./app-runs.js";
import { checkInvariants, surfaceProblems } from "./invariants.js";

/** Approvals answered per run, from its evidence: exactly one each. */
async function answersPerRun(app: TestApp, runIds: string[]): Promise<number[]> {
  return Promise.all(
    runIds.map(async (runId) =>
      (await app.host.store.listEvidence(runId)).filter(
        (record) => (record.entry as { kind?: string }).kind === "approval.answered",
      ),
    ),
  ).then((lists) => lists.map((list) => list.length));
}

describe("webhooks delivered twice, out of order, and after a crash", () => {
  let app: TestApp;
  beforeEach(async () => {
    app = await startShipApp();
  });
  afterEach(async () => {
    await app.close();
  });

  async function expectInvariants(count: number) {
    const ids = (await runsOf(app)).map((run) => run.runId);
    expect(ids).toHaveLength(count);
    expect(
      await checkInvariants({ store: app.host.store, runIds: ids, github: app.github }),
    ).toEqual([]);
    expect(await surfaceProblems(app.host.store, app.github, ids)).toEqual([]);
    expect(await answersPerRun(app, ids)).toEqual(ids.map(() => 1));
    expect(app.github.problems).toEqual([]);
    expect(app.errors).toEqual([]);
  }

  it(
    "starts and answers each run once when every delivery comes twice, all at once, shuffled",
    { timeout: runs(60_000, 600_000) },
    async () => {
      const count = runs(3, 30);
      const starts = labels(count);
      expect(await deliverAll(app, shuffled([...starts, ...starts], 1))).toEqual([]);
      await waitForRuns(app, count, ["awaiting_input"]);
      // The answers, each twice, with the starts again (late redeliveries) among them.
      const answers = approvals(count);
      expect(await deliverAll(app, shuffled([...answers, ...answers, ...starts], 2))).toEqual([]);
      await waitForRuns(app, count, ["succeeded"]);
      await expectInvariants(count);
    },
  );

  it(
    "handles deliveries a crashed process acknowledged and never handled, once, redelivered or not",
    { timeout: runs(60_000, 600_000) },
    async () => {
      const count = runs(2, 20);
      /** What a process leaves when it dies after recording (acknowledging) deliveries. */
      const acknowledgedThenCrashed = async (deliveries: Delivery[]) => {
        for (const { id, event, payload } of deliveries) {
          const left = {
            deliveryId: id,
            event,
            payload,
            receivedAt: Date.now() - 120_000,
            receivedBy: "crashed-replica:1:dead",
          };
          expect(await app.host.store.recordDelivery(left)).toBe(true);
        }
        await app.restart();
        // GitHub redelivers every other one (the crash answered it 5xx or not at all).
        const redelivered = deliveries.filter((_, i) => i % 2 === 0);
        expect(await deliverAll(app, shuffled([...redelivered, ...redelivered], 3))).toEqual([]);
        expect(await runsOf(app)).toHaveLength(deliveries[0]?.event === "issues" ? 0 : count);
      };
      const sweep = () => app.host.intake.sweep();

      await acknowledgedThenCrashed(labels(count));
      await waitForRuns(app, count, ["awaiting_input"], { nudge: sweep });
      await acknowledgedThenCrashed(approvals(count));
      await waitForRuns(app, count, ["succeeded"], { nudge: sweep });
      await expectInvariants(count);
    },
  );
});
