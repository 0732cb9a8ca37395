import { describe, expect, it } from "vitest";
import type { Store } from "../../src/store/store.js";
import { runs } from "../fuzz/fuzz-size.js";
import { SHIP_WORKFLOW } from "../github/helpers/harness.js";
import { OWNER, REPO } from "../helpers/payloads.js";
import { approvals, labels, type Delivery } from "./app-runs.js";
import { checkInvariants, surfaceProblems } from "./invariants.js";
import { LoopbackApp } from "./loopback-app.js";
import { pushedCommits } from "./pushes.js";

/** How long one step of a scenario may take at most (a loaded machine is slow, not stuck). */
const STEP_MS = 60_000;

/** Polls (bounded by time), reviving the app whenever it died, until `found` gives something. */
async function until<T>(app: LoopbackApp, what: string, found: () => Promise<T | undefined>) {
  const deadline = Date.now() + STEP_MS;
  for (;;) {
    await app.reviveIfDead();
    const value = await found();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Sends `delivery` until the app acknowledges it, as GitHub redelivers what was not. */
function deliver(app: LoopbackApp, delivery: Delivery): Promise<true> {
  return until(app, `delivery ${delivery.event} acknowledged`, async () =>
    (await app.send(delivery)) ? true : undefined,
  );
}

/** The run whose status comment says `status` (the scenario has one run). */
function runSaying(app: LoopbackApp, status: string): Promise<string> {
  return until(app, `a run ${status}`, () => {
    const comment = app.github.comments.find(
      (c) => c.body.includes("<!-- clustercode:run:") && c.body.includes(status),
    );
    return Promise.resolve(/<!-- clustercode:run:([^ ]+) -->/.exec(comment?.body ?? "")?.[1]);
  });
}

/** Evidence kinds a run started once, approved once and finished has exactly once. */
async function onceEach(store: Store, runId: string): Promise<string[]> {
  const kinds = (await store.listEvidence(runId)).map(
    (record) => (record.entry as { kind: string }).kind,
  );
  return ["run.started", "approval.answered", "run.finished"].flatMap((kind) => {
    const seen = kinds.filter((k) => k === kind).length;
    return seen === 1 ? [] : [`${runId}: ${kind} ${seen} times`];
  });
}

/**
 * One run of the ship workflow (a build in a DevBox, pushed; a check run and status comment;
 * an approval answered with `/approve`) on an app that SIGKILLs itself at effect boundary
 * `faultAt` and is started again on the same state directory. Returns whether it was killed.
 */
async function scenario(faultAt: number): Promise<boolean> {
  const app = await LoopbackApp.create(SHIP_WORKFLOW);
  try {
    app.github.permissions.set("alice", "write");
    app.github.permissions.set("bob", "write");
    await app.start(faultAt);
    const [label] = labels(1);
    const [approve] = approvals(1);
    await deliver(app, label!);
    await runSaying(app, "awaiting input");
    await deliver(app, approve!);
    const runId = await runSaying(app, "succeeded");
    const opened = await app.stopAndOpenStore();
    try {
      const { store } = opened;
      const listed = await store.listRuns(`${OWNER}/${REPO}`, { limit: Infinity });
      const problems = [
        ...listed.flatMap((run) => (run.runId === runId ? [] : [`a second run ${run.runId}`])),
        ...(await onceEach(store, runId)),
        ...(await checkInvariants({
          store,
          runIds: [runId],
          github: app.github,
          pushes: pushedCommits(app.remote),
          ledgerScopes: [`${OWNER}/${REPO}#ship`],
        })),
        ...(await surfaceProblems(store, app.github, [runId])),
        ...app.github.problems,
      ];
      expect(problems, `killed at boundary ${faultAt}`).toEqual([]);
      expect(pushedCommits(app.remote).map((c) => c.subject)).toContain(
        "clustercode: build (succeeded)",
      );
    } finally {
      await opened.close();
    }
    return app.restarts > 0;
  } finally {
    await app.close();
  }
}

describe("the app process SIGKILLed at an effect boundary and started again", () => {
  it(
    "finishes the run once, whichever boundary the kill fell on",
    { timeout: runs(240_000, 3_600_000) },
    async () => {
      // Every boundary in full; on CI every seventh, from the first, until one run ends with no
      // kill (its boundaries are all behind it).
      const stride = runs(7, 1);
      const killed: number[] = [];
      for (let boundary = 1; ; boundary += stride) {
        if (!(await scenario(boundary))) break;
        killed.push(boundary);
      }
      expect(killed.length).toBeGreaterThan(0);
    },
  );
});
