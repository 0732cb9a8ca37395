import { execFileSync } from "node:child_process";
import { mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { LocalHost } from "../../src/runtime/local-host.js";
import { definitionOf, workflowOf } from "../engine/harness.js";

const root = realpathSync(mkdtempSync(join(tmpdir(), "clustercode-admission-")));
afterAll(() => rm(root, { recursive: true, force: true }));

const workflow = workflowOf(`version: 1
name: gated
on: { label: go }
admission: { max_active_runs: 1 }
nodes:
  gate:
    kind: approval
edges:
  - { from: gate, to: done, label: approved }
  - { from: gate, to: failed, label: rejected }
`);

describe("admission on a local host", () => {
  it("queues a second run while the first holds the one slot, and starts it when the first ends", async () => {
    const repo = join(root, "repo");
    execFileSync("git", ["init", "-q", "-b", "main", repo]);
    writeFileSync(join(repo, "README.md"), "# demo\n");
    const host = await LocalHost.open({
      stateDir: join(root, "state"),
      env: { PATH: process.env.PATH, HOME: process.env.HOME },
    });
    try {
      const first = definitionOf(workflow, { runId: "a1", branch: "clustercode/local-a1" });
      const second = definitionOf(workflow, { runId: "a2", branch: "clustercode/local-a2" });
      expect((await host.start(first, { repo })).status).toBe("awaiting_input");
      expect((await host.start(second, { repo })).status).toBe("queued");
      const approve = {
        type: "approval.answer",
        decision: "approved",
        actor: "me",
        at: 1,
      } as const;
      await host.deliver("a1", approve);
      expect((await host.settled("a1")).status).toBe("succeeded");
      expect((await host.settled("a2")).status).toBe("awaiting_input");
    } finally {
      await host.close();
    }
  });
});
