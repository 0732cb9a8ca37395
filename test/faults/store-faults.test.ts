import { afterEach, describe, expect, it } from "vitest";
import { isRetryable } from "../../src/errors/app-error.js";
import { InstantWorld } from "../helpers/instant-world.js";
import { definitionOf, workflowOf } from "../engine/harness.js";
import { runs } from "../fuzz/fuzz-size.js";
import { useTestDynamo } from "../store/dynalite-fixture.js";
import {
  approvals,
  deliverAll,
  labels,
  runsOf,
  startShipApp,
  sweepLater,
  waitForRuns,
} from "./app-runs.js";
import { checkInvariants, surfaceProblems } from "./invariants.js";
import { StoreFaults } from "./store-faults.js";

const dynamo = useTestDynamo();

/** A loop that spends on every iteration against a per-run cap and a shared daily cap. */
const fixer = workflowOf(`version: 1
name: fixer
on: { label: go }
nodes:
  fix:
    kind: loop
    goal: Make the tests pass.
    agent: { engine: claude, model: claude-sonnet-4-5 }
    gates: [{ name: tests, run: npm test }]
    budget: { max_iterations: 6, max_cost_per_iteration_usd: 3, max_daily_cost_usd: 40 }
edges:
  - { from: fix, to: done }
  - { from: fix, to: fix, label: exhausted, back: true, max_traversals: 2 }
`);

const REPO = "acme/app";

describe("the store failing 0.5 % of its calls (throttles, timeouts, lost answers)", () => {
  let faults: StoreFaults | undefined;
  afterEach(() => faults?.uninstall());

  async function drive(count: number, installed: StoreFaults) {
    const store = await dynamo.newStore();
    installed.install();
    const gateRuns = new Map<string, number>();
    const world = new InstantWorld({
      store,
      repository: REPO,
      cost: 1.25,
      // Each run's gate fails its first three times: four iterations a run.
      exit: (request, devboxId) => {
        if (request.command.type !== "script") return 0;
        const failed = gateRuns.get(devboxId) ?? 0;
        gateRuns.set(devboxId, failed + 1);
        return failed < 3 ? 1 : 0;
      },
    });
    const ids = Array.from({ length: count }, (_, i) => `run${i}`);
    await Promise.all(
      ids.map((runId) => world.runtime.start(definitionOf(fixer, { runId }), { repo: REPO })),
    );
    for (const runId of ids) await world.settled(runId, runs(30_000, 300_000));
    installed.uninstall();
    return { store, world, ids };
  }

  it(
    "finishes every run with the invariants holding",
    { timeout: runs(30_000, 600_000) },
    async () => {
      faults = new StoreFaults({ rate: 0.005, seed: 22 });
      const { store, world, ids } = await drive(runs(16, 300), faults);
      // What reached the runtime is the store's failure after the SDK's retries, reported and
      // then recovered from: nothing else.
      expect(world.errors.filter((error) => !isRetryable(error))).toEqual([]);
      expect(
        await checkInvariants({ store, runIds: ids, ledgerScopes: [`${REPO}#fixer`] }),
      ).toEqual([]);
      // The scenario injected faults at all (the seed is fixed; the order of requests is not).
      expect(faults.total).toBeGreaterThan(0);
    },
  );

  it(
    "counts a ledger add once when its answer is lost and the SDK sends it again",
    { timeout: runs(30_000, 300_000) },
    async () => {
      faults = new StoreFaults({
        rate: 1,
        seed: 1,
        kinds: ["timeout-after"],
        oncePerRequest: true,
        only: (command, input) =>
          command === "UpdateItemCommand" && String(input.UpdateExpression).startsWith("ADD"),
      });
      const { store, world, ids } = await drive(runs(2, 20), faults);
      // What reached the runtime is the store's failure after the SDK's retries, reported and
      // then recovered from: nothing else.
      expect(world.errors.filter((error) => !isRetryable(error))).toEqual([]);
      expect(faults.total).toBeGreaterThan(0);
      expect(
        await checkInvariants({ store, runIds: ids, ledgerScopes: [`${REPO}#fixer`] }),
      ).toEqual([]);
    },
  );

  it(
    "takes runs of the app from label to approval to done",
    { timeout: runs(60_000, 600_000) },
    async () => {
      const app = await startShipApp();
      try {
        const count = runs(3, 30);
        faults = new StoreFaults({ rate: 0.005, seed: 22 });
        faults.install();
        // A delivery the store refused is GitHub's to send again; one whose handling failed
        // waits for a sweep. Both happen here, now.
        const starts = labels(count);
        const nudge = async () => {
          await deliverAll(app, starts);
          await sweepLater(app);
        };
        await deliverAll(app, starts);
        await waitForRuns(app, count, ["awaiting_input"], { nudge });
        const answers = approvals(count);
        const answer = async () => {
          await deliverAll(app, answers);
          await sweepLater(app);
        };
        await deliverAll(app, answers);
        await waitForRuns(app, count, ["succeeded"], { nudge: answer });
        faults.uninstall();
        const ids = (await runsOf(app)).map((run) => run.runId);
        expect(ids).toHaveLength(count);
        expect(
          await checkInvariants({ store: app.host.store, runIds: ids, github: app.github }),
        ).toEqual([]);
        expect(await surfaceProblems(app.host.store, app.github, ids)).toEqual([]);
        expect(faults.total).toBeGreaterThan(0);
        expect(app.github.problems).toEqual([]);
      } finally {
        await app.close();
      }
    },
  );
});
