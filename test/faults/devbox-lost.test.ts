import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
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
 * A build whose first try, in each run, says it started (a file in its checkout) and then
 * takes long enough to be killed; later tries finish at once. Each issue's run has its own
 * marker under `markers`.
 */
function workflow(markers: string): string {
  return `version: 1
name: ship
on:
  label: clustercode
nodes:
  build:
    kind: run
    run: 'm=${markers}/$(git rev-parse --abbrev-ref HEAD | tr / -); if [ ! -e "$m" ]; then touch "$m" started; sleep 60; fi; echo built > out.txt'
  gate:
    kind: approval
edges:
  - { from: build, to: gate }
  - { from: gate, to: done, label: approved }
  - { from: gate, to: failed, label: rejected }
`;
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
  const root = join(dirname(app.remote), "state", "devboxes");
  if (!existsSync(root)) return [];
  return readdirSync(root).flatMap((id) => {
    const dir = join(root, id);
    if (!existsSync(join(dir, "checkout", "started")) || !existsSync(join(dir, "pid"))) return [];
    return [Number(readFileSync(join(dir, "pid"), "utf8").trim())];
  });
}

describe("the DevBox process killed mid-command", () => {
  let app: TestApp | undefined;
  let markers: string | undefined;
  afterEach(async () => {
    await app?.close();
    if (markers !== undefined) rmSync(markers, { recursive: true, force: true });
  });

  it(
    "leaves every run settled, with no effect twice",
    { timeout: runs(60_000, 600_000) },
    async () => {
      markers = mkdtempSync(join(tmpdir(), "cc-markers-"));
      const started = (app = await startTestApp(workflow(markers), {
        // The test kills DevBox processes: they must be real ones.
        devboxes: "processes",
        // A lost DevBox is noticed within a second and a half, not the default half minute.
        env: { CLUSTERCODE_DEVBOX_LAPSE_MS: "1500", CLUSTERCODE_DEVBOX_HEARTBEAT_MS: "200" },
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
      for (const pid of pids) process.kill(pid, "SIGKILL");
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
