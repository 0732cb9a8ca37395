import { randomUUID } from "node:crypto";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isAlive } from "../../src/devbox/local/process-info.js";
import { runs } from "../fuzz/fuzz-size.js";
import { startTestApp, type TestApp } from "../github/helpers/harness.js";
import { commentOn } from "../helpers/payloads.js";
import type { RunDocument } from "../../src/runtime/runtime.js";
import { deliverAll, labels, runsOf, waitForRuns } from "./app-runs.js";
import { checkInvariants, surfaceProblems } from "./invariants.js";

/**
 * A build that says it started and waits for the test's go, both through files in its
 * checkout's .git: the DevBox is sandboxed, and its own directory is the one place both sides
 * see. The test kills the first try of each run, then lets every later one go.
 */
const WORKFLOW = `version: 1
name: ship
on:
  label: clustercode
nodes:
  build:
    kind: run
    run: 'touch .git/started; while [ ! -f .git/go ]; do sleep 0.1; done; echo built > out.txt'
  gate:
    kind: approval
edges:
  - { from: build, to: gate }
  - { from: gate, to: done, label: approved }
  - { from: gate, to: failed, label: rejected }
`;

/** The app's DevBox directories. */
function devboxDirs(app: TestApp): string[] {
  const root = join(dirname(app.remote), "state", "devboxes");
  return existsSync(root) ? readdirSync(root).map((id) => join(root, id)) : [];
}

/** Polls (bounded) until `found` gives something. */
async function waitFor<T>(
  what: string,
  found: () => T | undefined,
  timeoutMs = runs(20_000, 300_000),
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = found();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The pid of each DevBox of the app that has started its build command. */
function busyDevBoxes(app: TestApp): number[] {
  return devboxDirs(app).flatMap((dir) => {
    const started = join(dir, "checkout", ".git", "started");
    if (!existsSync(started) || !existsSync(join(dir, "pid"))) return [];
    return [Number(readFileSync(join(dir, "pid"), "utf8").trim())];
  });
}

describe("the DevBox process killed mid-command", () => {
  let app: TestApp | undefined;
  let opener: NodeJS.Timeout | undefined;
  afterEach(async () => {
    clearInterval(opener);
    await app?.close();
  });

  it(
    "leaves every run settled, with no effect twice",
    { timeout: runs(60_000, 600_000) },
    async () => {
      const started = (app = await startTestApp(WORKFLOW, {
        // The test kills DevBox processes: they must be real ones.
        devboxes: "processes",
        // A lost DevBox is noticed within four seconds (a sandboxed boot on a loaded machine can
        // outlast a shorter lapse), not the default half minute.
        env: { CLUSTERCODE_DEVBOX_LAPSE_MS: "4000", CLUSTERCODE_DEVBOX_HEARTBEAT_MS: "200" },
      }));
      started.github.permissions.set("alice", "write");
      started.github.permissions.set("bob", "write");
      const count = runs(2, 12);
      expect(await deliverAll(started, labels(count))).toEqual([]);
      const pids = await waitFor("every build to start", () => {
        const busy = busyDevBoxes(started);
        return busy.length >= count ? busy : undefined;
      });
      // SIGKILL, as the OOM killer or a host going away would: the DevBox says nothing.
      // The whole DevBox (bwrap and the agent in its namespaces) is one process group.
      for (const pid of pids) process.kill(-pid, "SIGKILL");
      // Every later try goes at once.
      opener = setInterval(() => {
        for (const dir of devboxDirs(started)) {
          const git = join(dir, "checkout", ".git");
          if (existsSync(git)) writeFileSync(join(git, "go"), "");
        }
      }, 100);
      const parked = await waitForRuns(
        started,
        count,
        ["awaiting_input", "failed", "succeeded", "cancelled", "escalated"],
        { timeoutMs: runs(30_000, 300_000) },
      );
      const ids = parked.map((run) => run.runId);
      // A run whose command was lost once it had started asks a person to `/retry` (its
      // command may have done something); then, like the others, it waits at its gate.
      const ENDED = ["failed", "succeeded", "cancelled", "escalated"];
      for (let round = 0; round < 3; round++) {
        const answers = (await runsOf(started)).flatMap((run) => {
          const kind = (run.snapshot as RunDocument).state.awaiting?.kind;
          if (run.status !== "awaiting_input" || run.issue === undefined) return [];
          const command = kind === "lost" ? "/retry" : "/approve";
          return [
            {
              id: randomUUID(),
              event: "issue_comment",
              payload: commentOn(run.issue, command, "bob"),
            },
          ];
        });
        if (answers.length === 0) break;
        expect(await deliverAll(started, answers)).toEqual([]);
        await waitForRuns(started, count, ["awaiting_input", ...ENDED], {
          timeoutMs: runs(30_000, 300_000),
        });
      }
      const ended = await waitForRuns(started, count, ENDED);
      expect(ended.map((run) => run.runId).sort()).toEqual([...ids].sort());
      for (const pid of pids) expect(await isAlive(pid)).toBe(false);
      for (const runId of ids) {
        const kinds = (await started.host.store.listEvidence(runId)).map(
          (record) => (record.entry as { kind?: string }).kind,
        );
        expect(kinds).toContain("attempt.lost");
      }
      expect(
        await checkInvariants({ store: started.host.store, runIds: ids, github: started.github }),
      ).toEqual([]);
      expect(await surfaceProblems(started.host.store, started.github, ids)).toEqual([]);
      expect(started.github.problems).toEqual([]);
      expect((await runsOf(started)).length).toBe(count);
    },
  );
});
