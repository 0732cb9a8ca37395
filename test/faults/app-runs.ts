import { randomUUID } from "node:crypto";
import { DeliveryIntake } from "../../src/github/intake/intake.js";
import { runs } from "../fuzz/fuzz-size.js";
import { seeded } from "./store-faults.js";
import type { StoredRun } from "../../src/store/store.js";
import { OWNER, REPO, startTestApp, type TestApp } from "../github/helpers/harness.js";
import { commentOn, labeledIssue, SHIP_WORKFLOW } from "../github/helpers/payloads.js";

/** The first issue number of a scenario; issue `FIRST_ISSUE + i` is run i's. */
export const FIRST_ISSUE = 20;

/** One webhook delivery: its id (X-GitHub-Delivery), event and payload. */
export interface Delivery {
  id: string;
  event: string;
  payload: object;
}

/** The label deliveries starting `count` runs, one per issue. */
export function labels(count: number): Delivery[] {
  return Array.from({ length: count }, (_, i) => ({
    id: randomUUID(),
    event: "issues",
    payload: labeledIssue(FIRST_ISSUE + i),
  }));
}

/** `/approve` comments on each of `count` issues. */
export function approvals(count: number, login = "bob"): Delivery[] {
  return Array.from({ length: count }, (_, i) => ({
    id: randomUUID(),
    event: "issue_comment",
    payload: commentOn(FIRST_ISSUE + i, "/approve", login),
  }));
}

/** The test app on the ship workflow, with alice (who labels) and bob (who approves) writers. */
export async function startShipApp(): Promise<TestApp> {
  const app = await startTestApp(SHIP_WORKFLOW);
  app.github.permissions.set("alice", "write");
  app.github.permissions.set("bob", "write");
  return app;
}

/** A seeded shuffle (mulberry32 draws), so that a failing order can be run again. */
export function shuffled<T>(items: readonly T[], seed: number): T[] {
  const random = seeded(seed);
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/**
 * Hands deliveries to Probot as GitHub would send them to one replica: all at once, without
 * waiting for each other; a delivery Probot refuses (a 5xx for GitHub) is returned, not thrown.
 */
export async function deliverAll(app: TestApp, deliveries: Delivery[]): Promise<unknown[]> {
  const refused: unknown[] = [];
  await Promise.all(
    deliveries.map(({ id, event, payload }) =>
      app.probot
        .receive({ id, name: event, payload } as never)
        .catch((error: unknown) => refused.push(error)),
    ),
  );
  await app.host.idle();
  return refused;
}

/** The runs of the scenario's repository. */
export function runsOf(app: TestApp): Promise<StoredRun[]> {
  return app.host.store.listRuns(`${OWNER}/${REPO}`, { limit: Infinity });
}

/**
 * Waits (at most `timeoutMs`, polling) until `count` runs exist and each is in one of
 * `statuses`, calling `nudge` between polls (a sweep, a recovery); returns them.
 */
export async function waitForRuns(
  app: TestApp,
  count: number,
  statuses: readonly string[],
  options: { timeoutMs?: number; nudge?: () => Promise<unknown> } = {},
): Promise<StoredRun[]> {
  const deadline = Date.now() + (options.timeoutMs ?? runs(15_000, 300_000));
  for (;;) {
    await app.host.idle();
    const found = await runsOf(app);
    if (found.length >= count && found.every((run) => statuses.includes(run.status))) {
      await app.host.idle();
      return runsOf(app);
    }
    if (Date.now() > deadline) {
      throw new Error(
        `expected ${count} runs ${statuses.join("/")}; have ${found.map((r) => `${r.runId}=${r.status}`).join(", ")}; errors: ${app.errors.join("; ")}`,
      );
    }
    await options.nudge?.();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * The sweep of another replica, a minute and a half later: it takes the deliveries whose
 * handling failed retryably (left unprocessed for a sweep), which the app's own sweep would
 * take after `staleMs`.
 */
export async function sweepLater(app: TestApp): Promise<number> {
  const intake = new DeliveryIntake({
    store: app.host.store,
    handle: (delivery) => app.host.handle(delivery),
    now: () => Date.now() + 90_000,
    holder: "later-sweeper",
    onError: (error, delivery) =>
      app.errors.push(
        `sweep of ${delivery.deliveryId}: ${error instanceof Error ? error.message : String(error)}`,
      ),
  });
  const taken = await intake.sweep();
  await intake.idle();
  await app.host.idle();
  return taken;
}
