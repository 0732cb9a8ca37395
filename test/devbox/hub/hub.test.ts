import { afterEach, describe, expect, it } from "vitest";
import type { CommandRequest, CommandResult } from "../../../src/engine/commands.js";
import { DevBoxError } from "../../../src/devbox/errors.js";
import type { DevBoxEvent } from "../../../src/devbox/hub/events.js";
import { DevBoxHub } from "../../../src/devbox/hub/hub.js";

const script = (commandId: string, text = "true"): CommandRequest => ({
  commandId,
  command: { type: "script", script: text },
});
const result = (commandId: string): CommandResult => ({
  commandId,
  exitCode: 0,
  output: "ok\n",
  durationMs: 5,
});

let hub: DevBoxHub | undefined;
afterEach(async () => {
  await hub?.close();
  hub = undefined;
});

/** A hub on a fake clock, with one registered DevBox and a typed way to call it. */
async function setup(options: { lapseMs?: number; startTimeoutMs?: number } = {}) {
  const events: DevBoxEvent[] = [];
  let now = 1_000_000;
  hub = new DevBoxHub({
    onEvent: (event) => events.push(event),
    now: () => now,
    checkIntervalMs: 60_000,
    ...options,
  });
  const url = await hub.listen();
  const { token } = hub.register({ devboxId: "run1-box1", runId: "run1" });
  const call = async (
    method: string,
    route: string,
    body?: unknown,
    auth: string | null = `Bearer ${token}`,
  ) => {
    const response = await fetch(`${url}/internal/devboxes/run1-box1/${route}`, {
      method,
      headers: auth === null ? {} : { authorization: auth },
      ...(body === undefined
        ? {}
        : { body: typeof body === "string" ? body : JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  return {
    hub,
    url,
    token,
    events,
    call,
    advance: (ms: number) => (now += ms),
  };
}

describe("DevBoxHub authentication", () => {
  it("answers 401 and nothing else to a missing, wrong or foreign token", async () => {
    const { hub, call, events } = await setup();
    const other = hub.register({ devboxId: "run2-box1", runId: "run2" }).token;
    hub.dispatch("run1-box1", script("c1"));
    const attempts = [
      null,
      "Bearer ",
      "Bearer nope",
      `Bearer ${other}`,
      `Basic ${Buffer.from("a:b").toString("base64")}`,
    ];
    for (const auth of attempts) {
      for (const [method, route, body] of [
        ["GET", "commands?wait=0"],
        ["POST", "ready", { ok: true }],
        ["POST", "results", result("c1")],
        ["POST", "heartbeat", {}],
      ] as const) {
        const answer = await call(method, route, body, auth);
        expect(answer).toEqual({ status: 401, body: { error: "unauthorized" } });
      }
    }
    expect(events).toEqual([]);
    // The rejected calls did not count as signs of life, and the command is still queued.
    const polled = await call("GET", "commands?wait=0");
    expect(polled.body).toEqual({ commands: [script("c1")] });
  });

  it("issues a distinct 64-hex-digit token per DevBox and the same one on re-registration", async () => {
    const { hub, token } = await setup();
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect(hub.register({ devboxId: "run1-box1", runId: "run1" }).token).toBe(token);
    expect(hub.register({ devboxId: "run1-box2", runId: "run1" }).token).not.toBe(token);
    expect(() => hub.register({ devboxId: "run1-box1", runId: "run9" })).toThrow(DevBoxError);
  });

  it("answers 401 for an unknown DevBox, 404 for an unknown route", async () => {
    const { url, token } = await setup();
    const unknown = await fetch(`${url}/internal/devboxes/ghost/heartbeat`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
    });
    expect(unknown.status).toBe(401);
    const missing = await fetch(`${url}/internal/devboxes/run1-box1/nothing`);
    expect(missing.status).toBe(404);
  });
});

describe("DevBoxHub commands", () => {
  it("holds a long-poll until a command is dispatched, then answers at once", async () => {
    const { hub, call } = await setup();
    const started = Date.now();
    const poll = call("GET", "commands?wait=10");
    setTimeout(() => hub.dispatch("run1-box1", script("c1", "npm test")), 150);
    const answer = await poll;
    expect(answer).toEqual({ status: 200, body: { commands: [script("c1", "npm test")] } });
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it("answers an empty list when the wait ends without work", async () => {
    const { call } = await setup();
    expect(await call("GET", "commands?wait=0.2")).toEqual({ status: 200, body: { commands: [] } });
  });

  it("queues a command id once however often it is dispatched", async () => {
    const { hub, call } = await setup();
    hub.dispatch("run1-box1", script("c1"));
    hub.dispatch("run1-box1", script("c1"));
    hub.dispatch("run1-box1", script("c2"));
    const polled = await call("GET", "commands?wait=1");
    expect(polled.body).toEqual({ commands: [script("c1"), script("c2")] });
    await call("POST", "results", result("c1"));
    hub.dispatch("run1-box1", script("c1"));
    expect((await call("GET", "commands?wait=0")).body).toEqual({ commands: [script("c2")] });
  });

  it("redelivers a command until its result arrives", async () => {
    const { hub, call } = await setup();
    hub.dispatch("run1-box1", script("c1"));
    expect((await call("GET", "commands")).body).toEqual({ commands: [script("c1")] });
    expect((await call("GET", "commands")).body).toEqual({ commands: [script("c1")] });
    await call("POST", "results", result("c1"));
    expect((await call("GET", "commands")).body).toEqual({ commands: [] });
  });

  it("gives every command the DevBox's files, the command's own winning", async () => {
    const events: DevBoxEvent[] = [];
    hub = new DevBoxHub({ onEvent: (event) => events.push(event) });
    const url = await hub.listen();
    const { token } = hub.register({
      devboxId: "b",
      runId: "r",
      files: { brief: "the issue", extra: "x" },
    });
    hub.dispatch("b", { ...script("c1"), files: { extra: "y" } });
    const response = await fetch(`${url}/internal/devboxes/b/commands`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(await response.json()).toEqual({
      commands: [{ ...script("c1"), files: { brief: "the issue", extra: "y" } }],
    });
  });

  it("refuses malformed commands and file names that are not identifiers", async () => {
    const { hub } = await setup();
    expect(() =>
      hub.dispatch("run1-box1", { ...script("c1"), files: { "../escape": "x" } }),
    ).toThrow(/files\.\.\.\/escape: file names are lower-case identifiers/);
    expect(() => hub.dispatch("ghost", script("c1"))).toThrow(/not registered/);
  });

  it("reports a result once however often it is posted", async () => {
    const { hub, call, events } = await setup();
    hub.dispatch("run1-box1", script("c1"));
    expect(await call("POST", "results", result("c1"))).toEqual({
      status: 200,
      body: { ok: true },
    });
    expect(await call("POST", "results", result("c1"))).toEqual({
      status: 200,
      body: { ok: true },
    });
    expect(events).toEqual([
      { type: "command.finished", devboxId: "run1-box1", result: result("c1") },
    ]);
    const unknown = await call("POST", "results", result("never"));
    expect(unknown).toEqual({ status: 409, body: { error: "command never was never dispatched" } });
  });

  it("reports ready once", async () => {
    const { call, events } = await setup();
    await call("POST", "ready", { ok: true, sha: "abc" });
    await call("POST", "ready", { ok: true, sha: "abc" });
    expect(events).toEqual([{ type: "devbox.ready", devboxId: "run1-box1", ok: true, sha: "abc" }]);
  });
});

describe("DevBoxHub bad requests", () => {
  it("says what is wrong with a body", async () => {
    const { call } = await setup();
    const badJson = await call("POST", "ready", "{ok: yes");
    expect(badJson.status).toBe(400);
    expect(badJson.body.error).toMatch(/^request body is not JSON: /);
    const badShape = await call("POST", "results", { commandId: "c1", exitCode: "zero" });
    expect(badShape.status).toBe(400);
    expect(badShape.body.error).toMatch(/exitCode: .*number/);
    expect(await call("GET", "commands?wait=soon")).toEqual({
      status: 400,
      body: { error: 'wait must be a number of seconds, got "soon"' },
    });
    expect((await call("GET", "ready")).status).toBe(405);
  });

  it("refuses bodies over 1 MiB", async () => {
    const { call } = await setup();
    const answer = await call("POST", "heartbeat", { running: "x".repeat(1024 * 1024) });
    expect(answer).toEqual({
      status: 413,
      body: { error: "request body is larger than 1048576 bytes" },
    });
  });
});

describe("DevBoxHub lapses and release", () => {
  it("reports a DevBox lost with its running command when heartbeats lapse", async () => {
    const { hub, call, events, advance } = await setup({ lapseMs: 1000 });
    hub.dispatch("run1-box1", script("c1", "sleep 100"));
    await call("GET", "commands");
    await call("POST", "heartbeat", { running: "c1" });
    advance(900);
    hub.checkLapses();
    await call("POST", "heartbeat", { running: "c1" });
    advance(1001);
    hub.checkLapses();
    hub.checkLapses();
    expect(events).toEqual([
      {
        type: "devbox.lost",
        devboxId: "run1-box1",
        reason: "heartbeat-lapsed",
        runningCommandId: "c1",
      },
    ]);
    // A lost DevBox is told to stop, and takes no more commands.
    expect((await call("GET", "commands?wait=5")).body).toEqual({ stop: true });
    expect(() => hub.dispatch("run1-box1", script("c2"))).toThrow(/was lost/);
  });

  it("names a delivered command without a result when the heartbeat named none", async () => {
    const { hub, call, events, advance } = await setup({ lapseMs: 1000 });
    hub.dispatch("run1-box1", script("c1"));
    await call("GET", "commands");
    advance(1001);
    hub.checkLapses();
    expect(events).toMatchObject([{ type: "devbox.lost", runningCommandId: "c1" }]);
  });

  it("reports a DevBox that never called as lost after the start timeout", async () => {
    const { hub, events, advance } = await setup({ lapseMs: 1000, startTimeoutMs: 5000 });
    advance(4000);
    hub.checkLapses();
    expect(events).toEqual([]);
    advance(1001);
    hub.checkLapses();
    expect(events).toEqual([
      { type: "devbox.lost", devboxId: "run1-box1", reason: "never-connected" },
    ]);
  });

  it("ends a held long-poll with stop on release, and stops heartbeats too", async () => {
    const { hub, call, events, advance } = await setup({ lapseMs: 1000 });
    const poll = call("GET", "commands?wait=10");
    setTimeout(() => hub.release("run1-box1"), 100);
    expect((await poll).body).toEqual({ stop: true });
    expect((await call("POST", "heartbeat", {})).body).toEqual({ stop: true });
    hub.release("run1-box1");
    hub.release("never-registered");
    advance(10_000);
    hub.checkLapses();
    expect(events).toEqual([]);
  });

  it("forgets a released DevBox after a while: its agent is then refused", async () => {
    const { hub, call, advance } = await setup({ lapseMs: 1000 });
    hub.release("run1-box1");
    expect((await call("GET", "commands?wait=0")).body).toEqual({ stop: true });
    advance(11 * 60_000);
    hub.checkLapses();
    expect((await call("GET", "commands?wait=0")).status).toBe(401);
  });
});
