import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { RunRepository } from "../../src/store/run-repository.js";
import type { Store, StoredRun } from "../../src/store/store.js";
import { runs } from "../fuzz/fuzz-size.js";
import type { FakeGitHub } from "../github/helpers/fake-github.js";
import { OWNER, REPO } from "../helpers/payloads.js";
import { approvals, FIRST_ISSUE, labels, type Delivery } from "./app-runs.js";
import {
  lossProblems,
  runProblems,
  startProblems,
  STARTS_FILE,
  type FleetEvidence,
} from "./fleet-invariants.js";
import { Chaos, Traffic } from "./fleet-traffic.js";
import { checkInvariants, surfaceProblems } from "./invariants.js";
import { pushedCommits } from "./pushes.js";
import { ReplicaFleet } from "./replica-fleet.js";
import { seeded } from "./store-faults.js";

/**
 * Each command notes its start (node and time) beside its DevBox's checkout; the last node is a
 * deploy that must never run twice, and takes long enough for a kill to land during it.
 */
const FLEET_WORKFLOW = `version: 1
name: fleet
on:
  label: clustercode
nodes:
  build:
    kind: run
    run: echo build $(date +%s%3N) >> ${STARTS_FILE} && echo built > out.txt
  gate:
    kind: approval
  ship:
    kind: run
    idempotent: false
    run: echo ship $(date +%s%3N) >> ${STARTS_FILE} && sleep 2 && echo shipped > shipped.txt
edges:
  - { from: build, to: gate }
  - { from: gate, to: ship, label: approved }
  - { from: gate, to: failed, label: rejected }
  - { from: ship, to: done }
`;

/**
 * The scenario's size: the soak's with CLUSTERCODE_SOAK=1, else CI's; CLUSTERCODE_FLEET_RUNS and
 * CLUSTERCODE_FLEET_KILLS set the numbers of runs and kills.
 */
const SIZE = {
  runs: Number(process.env.CLUSTERCODE_FLEET_RUNS ?? runs(3, 100)),
  kills: Number(process.env.CLUSTERCODE_FLEET_KILLS ?? runs(2, 20)),
  /** Between two labels. */
  labelGapMs: runs(300, 1_500),
  /** Between two kills. */
  killGapMs: [runs(1_500, 4_000), runs(4_000, 12_000)] as [number, number],
};

/** How long a phase may take at most (a loaded machine is slow, not stuck). */
const PHASE_MS = runs(180_000, 1_800_000);

/** A settle check's first line when waiting longer is no use. */
const ENDED = "ended before its gate:";

/** Polls `check` (bounded by {@link PHASE_MS}) until it finds no problem, or {@link ENDED}; returns the last. */
async function settle(what: string, check: () => Promise<string[]>): Promise<string[]> {
  const deadline = Date.now() + PHASE_MS;
  for (;;) {
    const problems = await check();
    if (problems.length === 0 || Date.now() > deadline || problems[0] === ENDED) {
      if (process.env.FLEET_TRACE)
        console.info(new Date().toISOString(), what, problems.slice(0, 3));
      return problems;
    }
    await sleep(250);
  }
}

/** The runs of the scenario's repository. */
function listRuns(store: Store): Promise<StoredRun[]> {
  return store.listRuns(`${OWNER}/${REPO}`, { limit: Infinity });
}

/**
 * The label → status comment time of each issue: from the label's first sending to the first
 * status comment the fake GitHub holds on the issue (polled every 100 ms until `stop`).
 */
function watchStatusComments(github: FakeGitHub, sentAt: (issue: number) => number | undefined) {
  const latency = new Map<number, number>();
  let stopped = false;
  const watching = (async () => {
    while (!stopped) {
      for (const comment of github.comments) {
        const sent = sentAt(comment.issue);
        if (latency.has(comment.issue) || sent === undefined) continue;
        if (comment.body.includes("<!-- clustercode:run:"))
          latency.set(comment.issue, Date.now() - sent);
      }
      await sleep(100);
    }
  })();
  return {
    latency,
    stop: async () => {
      stopped = true;
      await watching;
    },
  };
}

/** The replica running a deploy now (its start noted, its result not yet written), if any. */
function shipInFlight(fleet: ReplicaFleet): number | undefined {
  for (let i = 0; i < fleet.size; i++) {
    const devboxes = join(fleet.stateDir(i), "devboxes");
    if (!fleet.alive(i) || !existsSync(devboxes)) continue;
    for (const devbox of readdirSync(devboxes)) {
      const starts = join(devboxes, devbox, "checkout", STARTS_FILE);
      const started = existsSync(starts) && readFileSync(starts, "utf8").includes("ship ");
      if (started && !existsSync(join(devboxes, devbox, "checkout", "shipped.txt"))) return i;
    }
  }
  return undefined;
}

/** One more kill while the last nodes run: the replica running a deploy; false if none did. */
async function killDuringLastNodes(fleet: ReplicaFleet, chaos: Chaos, store: Store) {
  const deadline = Date.now() + PHASE_MS;
  while (Date.now() < deadline) {
    const target = shipInFlight(fleet);
    if (target !== undefined) {
      await chaos.killAndRestart(target);
      return true;
    }
    const all = await listRuns(store);
    if ((await runProblems(store, all, [])).length === 0) return false;
    await sleep(50);
  }
  return false;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

/** Every invariant of the multi-replica model, once runs are quiet; each violation a line. */
async function fleetProblems(fleet: ReplicaFleet, store: Store, issues: number[]) {
  const evidence: FleetEvidence = {
    stateDirs: Array.from({ length: fleet.size }, (_, i) => fleet.stateDir(i)),
    lives: Array.from({ length: fleet.size }, (_, i) => fleet.lives(i)),
    nonIdempotent: ["ship"],
  };
  const all = await listRuns(store);
  const runIds = all.map((run) => run.runId);
  const { github } = fleet.app;
  return [
    ...(await runProblems(store, all, issues)),
    ...(await settle("status comments", () => surfaceProblems(store, github, runIds))),
    ...(await checkInvariants({ store, runIds, github, pushes: pushedCommits(fleet.app.remote) })),
    ...startProblems(evidence),
    ...(await lossProblems(store, runIds, evidence)),
    ...(await settle("DevBox processes", () => Promise.resolve(fleet.leftoverProcesses()))).map(
      (line) => `left running: ${line}`,
    ),
    ...github.problems,
  ];
}

/** Labels every issue (one every `labelGapMs`), waits for every run at its gate, approves all. */
async function labelAndApprove(labelled: Delivery[], traffic: Traffic, store: Store) {
  await Promise.all(
    labelled.map(async (delivery, i) => {
      await sleep(i * SIZE.labelGapMs);
      await traffic.deliver(delivery);
    }),
  );
  const gate = await settle("every run at its gate", async () => {
    const all = await listRuns(store);
    const waiting = all.filter((run) => run.status === "awaiting_input").length;
    const ended = all.filter(
      (run) => !["queued", "running", "awaiting_input"].includes(run.status),
    );
    if (ended.length > 0)
      return ["ended before its gate:", ...(await runProblems(store, ended, []))];
    if (waiting === SIZE.runs) return [];
    // Where each run not at its gate yet stands, for the failure to say.
    const repository = new RunRepository(store);
    const elsewhere = all.filter((run) => run.status !== "awaiting_input");
    const where = await Promise.all(
      elsewhere.map(async (run) => {
        const visit = (await repository.get(run.runId))?.document.state.visits.at(-1);
        return `${run.runId} (issue ${run.issue}) ${run.status}: ${JSON.stringify(visit)}`;
      }),
    );
    return [`${waiting} of ${SIZE.runs} runs wait`, ...where];
  });
  if (gate.length > 0) throw new Error(gate.join("\n"));
  await Promise.all(approvals(SIZE.runs).map((delivery) => traffic.deliver(delivery)));
}

describe("three app replicas over one store, killed at random with their DevBoxes", () => {
  it(
    "start one run per trigger, create each surface once, run no claim twice and lose nothing",
    { timeout: 6 * PHASE_MS },
    async () => {
      const seed = Number(process.env.CLUSTERCODE_SEED ?? Math.floor(Math.random() * 2 ** 31));
      const random = seeded(seed);
      const started = Date.now();
      const fleet = await ReplicaFleet.create(FLEET_WORKFLOW, 3);
      const opened = await fleet.openStore();
      const chaos = new Chaos(fleet, random, SIZE.killGapMs);
      try {
        fleet.app.github.permissions.set("alice", "write");
        fleet.app.github.permissions.set("bob", "write");
        for (let i = 0; i < fleet.size; i++) await fleet.start(i);
        const traffic = new Traffic(fleet, random);
        const labelled = labels(SIZE.runs);
        const watch = watchStatusComments(fleet.app.github, (issue) =>
          traffic.sentAt.get(labelled[issue - FIRST_ISSUE]?.id ?? ""),
        );
        chaos.start(SIZE.kills - 1);
        await labelAndApprove(labelled, traffic, opened.store);
        await chaos.stop();
        const lastKill = await killDuringLastNodes(fleet, chaos, opened.store);
        await settle("runs quiet", async () => {
          const all = await listRuns(opened.store);
          return runProblems(opened.store, all, []);
        });
        const problems = await fleetProblems(
          fleet,
          opened.store,
          labelled.map((_, i) => FIRST_ISSUE + i),
        );
        await watch.stop();
        const latencies = [...watch.latency.values()];
        const created = (await listRuns(opened.store)).map(
          (run) =>
            run.createdAt -
            (traffic.sentAt.get(labelled[(run.issue ?? 0) - FIRST_ISSUE]?.id ?? "") ?? 0),
        );
        console.info(
          `replica fleet (seed ${seed}): ${SIZE.runs} runs, ${chaos.kills} kills (last during the deploys: ${lastKill}), ` +
            `label → run p50 ${percentile(created, 50)} ms, p99 ${percentile(created, 99)} ms; ` +
            `label → status comment p50 ${percentile(latencies, 50)} ms, p99 ${percentile(latencies, 99)} ms, max ${Math.max(...latencies)} ms, ` +
            `${Math.round((Date.now() - started) / 1000)} s`,
        );
        expect(problems, `seed ${seed} (CLUSTERCODE_SEED=${seed} runs it again)`).toEqual([]);
        expect(latencies, `seed ${seed}: every issue got its status comment`).toHaveLength(
          SIZE.runs,
        );
      } finally {
        // A failure leaves the killing going: no replica is started again once closing.
        await chaos.stop();
        await opened.close();
        await fleet.close();
      }
    },
  );
});
