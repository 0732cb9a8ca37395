import type { IssuesLabeledEvent } from "@octokit/webhooks-types";
import { afterEach, describe, expect, it } from "vitest";
import type { Installations } from "../../src/github/client/installations.js";
import { statusMarker } from "../../src/github/surfaces/render-status.js";
import { Surfaces } from "../../src/github/surfaces/surfaces.js";
import type { Admission } from "../../src/runtime/admission.js";
import type { Store } from "../../src/store/store.js";
import { payloadOf, startTestApp, type TestApp } from "./helpers/harness.js";
import { commentOn } from "./helpers/payloads.js";

const GATED = `version: 1
name: ship
on:
  label: clustercode
nodes:
  build: { kind: run, run: "date > built.txt" }
  gate: { kind: approval }
edges:
  - { from: build, to: gate }
  - { from: gate, to: done, label: approved }
  - { from: gate, to: failed, label: rejected }
`;

describe("a restart's resync of surfaces", () => {
  let app: TestApp | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it("writes nothing to a parked run's surfaces that is already current", async () => {
    app = await startTestApp(GATED);
    app.github.permissions.set("alice", "write");
    const labeled = payloadOf<IssuesLabeledEvent>("issues", "labeled", (p) => {
      if (p.label !== undefined) p.label.name = "clustercode";
      p.issue.number = 9;
      p.sender.login = "alice";
      p.sender.type = "User";
    });
    await app.deliver("issues", labeled);
    await app.waitForStatus("awaiting_input");
    const before = app.github.requests.length;
    expect(app.github.calls("POST", /\/issues\/9\/comments$/)).not.toEqual([]);

    await app.restart();

    const after = app.github.requests
      .slice(before)
      .filter((r) => !r.path.endsWith("/access_tokens"))
      .map((r) => `${r.method} ${r.path}`);
    // What it last wrote is read from the store: no write, and no listing to find it again.
    expect(after.filter((call) => !call.startsWith("GET "))).toEqual([]);
    expect(after.filter((call) => /\/comments|\/check-runs/.test(call))).toEqual([]);
    expect(app.errors).toEqual([]);
  });

  it("posts the status comment again when a person deleted it", async () => {
    app = await startTestApp(GATED);
    app.github.permissions.set("alice", "write");
    app.github.permissions.set("bob", "write");
    await app.deliver("issues", labeledOn(9));
    const { state } = await app.waitForStatus("awaiting_input");
    const marker = statusMarker(state.runId);
    const statusComments = () => app!.github.comments.filter((c) => c.body.includes(marker));
    expect(statusComments()).toHaveLength(1);
    app.github.comments.splice(app.github.comments.indexOf(statusComments()[0]!), 1);

    await app.deliver("issue_comment", commentOn(9, "/approve", "bob"));
    await app.waitForStatus("succeeded");
    await app.host.idle();

    expect(statusComments()).toHaveLength(1);
    expect(statusComments()[0]!.body).toMatch(/succeeded/i);
  });
});

describe("surfaces of one run synced by two replicas at once", () => {
  let app: TestApp | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it("creates each check run and comment once: one replica writes while the other waits", async () => {
    app = await startTestApp(GATED);
    app.github.permissions.set("alice", "write");
    await app.deliver("issues", labeledOn(9));
    const { state } = await app.waitForStatus("awaiting_input");
    // Both replicas start from nothing, as two restarted ones do: no memo, no surfaces yet.
    await app.host.store.putSurfaceMemo(state.runId, {});
    app.github.checkRuns.splice(0);
    app.github.comments.splice(0);
    const first = app.host.surfaces;
    const deps = (first as unknown as { deps: ConstructorParameters<typeof Surfaces>[0] }).deps;
    const second = new Surfaces({ ...deps, holder: "replica-2" });

    const synced = await Promise.all([first.sync(state.runId), second.sync(state.runId)]);

    const names = app.github.checkRuns.map((check) => check.name);
    expect(names.length).toBeGreaterThan(0);
    expect(names).toEqual([...new Set(names)]);
    expect(synced.filter(Boolean)).toHaveLength(1);
    const marker = statusMarker(state.runId);
    expect(app.github.comments.filter((c) => c.body.includes(marker))).toHaveLength(1);
    // The other replica syncs next from what the first one wrote: nothing is created again.
    const before = app.github.checkRuns.length;
    expect(await second.sync(state.runId)).toBe(true);
    expect(app.github.checkRuns).toHaveLength(before);
    expect(app.github.comments.filter((c) => c.body.includes(marker))).toHaveLength(1);
  });
});

function labeledOn(issue: number) {
  return payloadOf<IssuesLabeledEvent>("issues", "labeled", (p) => {
    if (p.label !== undefined) p.label.name = "clustercode";
    p.issue.number = issue;
    p.sender.login = "alice";
    p.sender.type = "User";
  });
}

/** Surfaces whose syncs are recorded and held until the test lets them finish. */
class HeldSurfaces extends Surfaces {
  readonly started: string[] = [];
  readonly #gates = new Map<string, () => void>();
  readonly #waiting = new Map<string, () => void>();

  constructor() {
    super({
      store: {} as Store,
      installations: {} as Installations,
      admission: {} as Admission,
      onError: (error) => {
        throw error;
      },
      debounceMs: 0,
    });
  }

  override async sync(runId: string): Promise<boolean> {
    this.started.push(runId);
    this.#waiting.get(runId)?.();
    await new Promise<void>((resolve) => this.#gates.set(runId, resolve));
    return true;
  }

  /** Resolves once a sync of `runId` started. */
  startedSync(runId: string): Promise<void> {
    if (this.started.includes(runId)) return Promise.resolve();
    return new Promise((resolve) => this.#waiting.set(runId, resolve));
  }

  /** Lets the sync of `runId` finish. */
  release(runId: string): void {
    this.#gates.get(runId)?.();
  }
}

describe("the surfaces' lanes", () => {
  it("syncs a run asked for interactively ahead of a restart's backlog", async () => {
    const surfaces = new HeldSurfaces();
    for (const runId of ["a", "b", "c"]) surfaces.resync(runId);
    await surfaces.startedSync("a");
    // A command's answer to run x arrives while the backlog's first resync is under way.
    surfaces.request("x");
    await surfaces.startedSync("x");
    surfaces.release("a");
    surfaces.release("x");
    await surfaces.startedSync("b");
    surfaces.release("b");
    await surfaces.startedSync("c");
    surfaces.release("c");
    await surfaces.idle();
    expect(surfaces.started).toEqual(["a", "x", "b", "c"]);
  });

  it("never syncs one run in both lanes at once; drops a resync an interactive sync covers", async () => {
    const surfaces = new HeldSurfaces();
    surfaces.resync("a");
    surfaces.resync("b");
    await surfaces.startedSync("a");
    surfaces.request("a");
    surfaces.request("b");
    // b goes at once; the interactive sync of a waits for a's resync to end.
    await until(() => surfaces.started.length === 2);
    expect(surfaces.started).toEqual(["a", "b"]);
    surfaces.release("a");
    await until(() => surfaces.started.length === 3);
    surfaces.release("a");
    surfaces.release("b");
    await surfaces.idle();
    expect(surfaces.started).toEqual(["a", "b", "a"]);
  });
});

async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 1));
}
