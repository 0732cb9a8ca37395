import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runs } from "../fuzz/fuzz-size.js";
import type { Outage } from "../github/helpers/fake-github.js";
import { type TestApp } from "../github/helpers/harness.js";
import {
  approvals,
  deliverAll,
  labels,
  runsOf,
  startShipApp,
  shuffled,
  sweepLater,
  waitForRuns,
} from "./app-runs.js";
import { checkInvariants, surfaceProblems } from "./invariants.js";
import { seeded } from "./store-faults.js";

/** The writes that make a run's surfaces (not the token exchange, which every call needs). */
const WRITES =
  /\/issues\/\d+\/comments$|\/issues\/comments\/\d+$|\/check-runs(\/\d+)?$|\/pulls$|\/requested_reviewers$|\/labels\/|\/issues$/;

/** GitHub's error answers to a write: outages before and after the write, secondary limits. */
const ANSWERS: readonly Outage[] = [
  { status: 502 },
  { status: 502, wrote: true },
  { status: 500 },
  { status: 500, wrote: true },
  {
    status: 403,
    headers: { "retry-after": "1" },
    message: "You have exceeded a secondary rate limit. Please wait a few minutes.",
  },
];

/** Fails `rate` of the writes (seeded), each with one of {@link ANSWERS}. */
function failingWrites(rate: number, seed: number) {
  const random = seeded(seed);
  const injected: string[] = [];
  const faultOf = (method: string, path: string): Outage | undefined => {
    if (method === "GET" || !WRITES.test(path) || random() >= rate) return undefined;
    const answer = ANSWERS[Math.floor(random() * ANSWERS.length)];
    injected.push(`${method} ${path} ${answer?.status}${answer?.wrote === true ? " (wrote)" : ""}`);
    return answer;
  };
  return { faultOf, injected };
}

describe("GitHub answering 502, 500 and secondary-rate-limit 403s to writes", () => {
  let app: TestApp;
  beforeEach(async () => {
    app = await startShipApp();
  });
  afterEach(async () => {
    await app.close();
  });

  it("makes each surface once and drops none", { timeout: runs(60_000, 600_000) }, async () => {
    const count = runs(3, 30);
    const faults = failingWrites(0.2, 5);
    app.github.faultOf = faults.faultOf;
    expect(await deliverAll(app, labels(count))).toEqual([]);
    // A delivery whose handling met an error is left for a later sweep; the test runs it now.
    const nudge = () => sweepLater(app);
    await waitForRuns(app, count, ["awaiting_input"], { nudge });
    expect(await deliverAll(app, shuffled(approvals(count), 1))).toEqual([]);
    await waitForRuns(app, count, ["succeeded"], { nudge });
    app.github.faultOf = undefined;
    const ids = (await runsOf(app)).map((run) => run.runId);
    expect(ids).toHaveLength(count);
    expect(faults.injected.length).toBeGreaterThan(0);
    expect(
      await checkInvariants({ store: app.host.store, runIds: ids, github: app.github }),
    ).toEqual([]);
    expect(await surfaceProblems(app.host.store, app.github, ids)).toEqual([]);
    expect(app.github.problems).toEqual([]);
  });

  it(
    "shows a run's end when GitHub fails the writes of its last sync",
    { timeout: 30_000 },
    async () => {
      expect(await deliverAll(app, labels(1))).toEqual([]);
      await waitForRuns(app, 1, ["awaiting_input"]);
      // The approval's sync: the status comment's edit and the check runs' fail, the edit twice.
      app.github.outages.push(
        { method: "PATCH", path: /\/issues\/comments\/\d+$/, status: 502 },
        { method: "PATCH", path: /\/issues\/comments\/\d+$/, status: 500 },
        { method: "PATCH", path: /\/check-runs\/\d+$/, ...ANSWERS[4] },
      );
      expect(await deliverAll(app, approvals(1))).toEqual([]);
      await waitForRuns(app, 1, ["succeeded"]);
      await app.host.idle();
      expect(app.github.outages).toEqual([]);
      const ids = (await runsOf(app)).map((run) => run.runId);
      expect(await surfaceProblems(app.host.store, app.github, ids)).toEqual([]);
      expect(
        await checkInvariants({ store: app.host.store, runIds: ids, github: app.github }),
      ).toEqual([]);
      const check = app.github.checkRuns.find((run) => run.external_id === ids[0]);
      expect(check).toMatchObject({ conclusion: "success" });
    },
  );
});
