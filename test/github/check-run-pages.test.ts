import { afterEach, describe, expect, it } from "vitest";
import { SHIP_WORKFLOW, startTestApp, type TestApp } from "./helpers/harness.js";
import { commentOn, labeledIssue } from "../helpers/payloads.js";

describe("check runs past the first page", () => {
  let app: TestApp;
  afterEach(async () => {
    expect(app.github.problems).toEqual([]);
    await app.close();
  });

  it("after a restart, finds its own check runs behind 150 of CI's on the same commit", async () => {
    app = await startTestApp(SHIP_WORKFLOW);
    app.github.permissions.set("alice", "write");
    await app.deliver("issues", labeledIssue(7));
    const { state } = await app.waitForStatus("awaiting_input");
    // CI's check runs on the run's head come first in the listing: ours are on page 2.
    const ci = Array.from({ length: 150 }, (_, i) => ({
      id: 10_000 + i,
      html_url: `https://github.com/checks/${10_000 + i}`,
      name: `ci-${i}`,
      head_sha: state.lastSha,
      external_id: `ci-${i}`,
      status: "completed",
    }));
    app.github.checkRuns.unshift(...ci);
    const ours = () =>
      app.github.checkRuns.filter((run) => String(run.external_id).startsWith(state.runId));
    const before = ours().length;
    // As for a run synced before the app kept what it wrote beside the run: no usable memo, so
    // the restart finds its check runs by listing them.
    await app.host.store.putSurfaceMemo(state.runId, { v: 0 });

    await app.restart();
    await app.deliver("issue_comment", commentOn(7, "/approve", "alice"));
    await app.waitForStatus("succeeded");
    // Updated in place, none created twice for the same check and commit.
    const keys = ours().map((run) => `${String(run.external_id)}@${String(run.head_sha)}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect(ours().length).toBe(before);
    expect(app.github.calls("GET", /check-runs$/).some((c) => c.query.get("page") === "2")).toBe(
      true,
    );
  }, 60_000);
});
