import { describe, expect, it } from "vitest";
import { createRecord, heartbeatAnswer, interruptCommand } from "../../../src/devbox/hub/record.js";

const request = (commandId: string) => ({
  commandId,
  command: { type: "script" as const, script: "sleep 60" },
});

describe("interrupting a DevBox's command", () => {
  it("names the running command in the heartbeat answer, and only that one", () => {
    const record = createRecord("r1", "token", {}, 0);
    record.pending.push(request("c1"));
    record.dispatched.add("c1");
    record.delivered.add("c1");
    record.running = "c1";
    expect(heartbeatAnswer(record)).toEqual({ ok: true });
    interruptCommand(record, "c1");
    expect(heartbeatAnswer(record)).toEqual({ ok: true, interrupt: "c1" });
    record.running = "c2";
    expect(heartbeatAnswer(record)).toEqual({ ok: true });
    record.state = "released";
    expect(heartbeatAnswer(record)).toEqual({ stop: true });
  });

  it("takes back a command the agent has not received yet", () => {
    const record = createRecord("r1", "token", {}, 0);
    record.pending.push(request("c1"), request("c2"));
    record.delivered.add("c1");
    interruptCommand(record, "c2");
    expect(record.pending.map((pending) => pending.commandId)).toEqual(["c1"]);
  });
});
