import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { resolveEngines } from "../../src/agents/engines.js";
import type { EvidenceEntry } from "../../src/engine/model.js";
import { LocalHost } from "../../src/runtime/local-host.js";
import { workflowOf } from "../engine/harness.js";

const root = realpathSync(mkdtempSync(join(tmpdir(), "clustercode-race-")));
afterAll(() => rm(root, { recursive: true, force: true }));

/** A marker in every racer's argv, so the test can look for processes left behind. */
const MARKER = `race-marker-${process.pid}-${Date.now()}`;

/**
 * A racing agent: model `fast` finishes in a moment; `slow` would work for a minute, so it is
 * still running when the race is decided and must be cancelled.
 */
const RACER = `import { writeFileSync } from "node:fs";
const [, , promptFile, model] = process.argv;
if (model === "slow") {
  writeFileSync("STARTED", "slow\\n");
  setTimeout(() => writeFileSync("SLOW_DONE", "too late\\n"), 60_000);
} else {
  setTimeout(() => writeFileSync("WINNER", promptFile ? "fast\\n" : "?\\n"), 200);
}
`;

function racingProcesses(): string[] {
  const ps = execFileSync("ps", ["-eo", "pid,args"], { encoding: "utf8" });
  return ps.split("\n").filter((line) => line.includes(MARKER) && !line.includes("ps -eo"));
}

describe("a prototype race on local DevBoxes", () => {
  it("the second variant passes first and wins onto the run branch; the others are cancelled, with no process left running", async () => {
    // Local DevBoxes run the built CLI (`npm test` builds it first).
    const cli = new URL("../../dist/cli/main.js", import.meta.url);
    expect(existsSync(cli), "dist/cli/main.js is missing: run npm run build").toBe(true);
    const repo = join(root, "repo");
    const git = (...args: string[]) =>
      execFileSync("git", ["-C", repo, ...args], { stdio: "pipe" });
    execFileSync("git", ["init", "-q", "-b", "main", repo]);
    writeFileSync(join(repo, "README.md"), "# demo\n");
    // The engine's script is the repository's own: a sandboxed DevBox sees its checkout only.
    writeFileSync(join(repo, "racer.mjs"), RACER);
    git("add", "-A");
    git("-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", "init");
    const workflow = workflowOf(`version: 1
name: race
on: { label: go }
engines:
  racer: { command: [node, racer.mjs, "{prompt_file}", "{model}", ${MARKER}] }
nodes:
  prototype:
    kind: prototype
    brief: Leave a WINNER file.
    variants:
      - { engine: racer, model: slow }
      - { engine: racer, model: fast }
      - { engine: racer, model: slow }
    gates: [{ name: winner, run: test -f WINNER }]
    select: first
  after: { kind: run, run: "cat WINNER > AFTER" }
edges:
  - { from: prototype, to: after }
`);
    const env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      CLUSTERCODE_DEVBOX_HEARTBEAT_MS: "200",
      CLUSTERCODE_DEVBOX_LAPSE_MS: "3000",
    };
    const host = await LocalHost.open({
      stateDir: join(root, "state"),
      env,
    });
    try {
      await host.runtime.start(
        {
          runId: "race1",
          workflow,
          baseBranch: "main",
          branch: "clustercode/local-race1",
          brief: "Leave a WINNER file.",
          engines: resolveEngines(workflow),
        },
        { repo },
      );
      const state = await host.settled("race1");
      expect(state.status, state.reason).toBe("succeeded");
      // One run, one branch: the winner's commits were moved onto the run branch.
      expect(state.branch).toBe("clustercode/local-race1");
      // The winner's checkpoint stays on its variant branch, as evidence of the race.
      expect(git("show", "clustercode/local-race1-v2:WINNER").toString()).toBe("fast\n");
      // The next node's DevBox checked out the run branch, with the winner's work on it, and
      // its checkpoint pushed there, on top of the winner's commit.
      expect(git("show", "clustercode/local-race1:AFTER").toString()).toBe("fast\n");
      const winner = git("rev-parse", "clustercode/local-race1-v2").toString().trim();
      expect(git("rev-parse", "clustercode/local-race1~1").toString().trim()).toBe(winner);
      expect(git("rev-parse", "clustercode/local-race1").toString().trim()).toBe(state.lastSha);
      const evidence = (await host.store.listEvidence("race1")).map(
        (r) => r.entry as EvidenceEntry,
      );
      expect(evidence.find((e) => e.kind === "prototype.selected")).toMatchObject({
        variant: 2,
        branch: "clustercode/local-race1",
        variantBranch: "clustercode/local-race1-v2",
        why: "first to pass its gates",
      });
      const claims = evidence.filter((e) => e.kind === "devbox.claimed").map((e) => e.branch);
      expect(claims.at(-1)).toBe("clustercode/local-race1");
      const table = evidence.find((e) => e.kind === "prototype.variants");
      expect((table?.variants as { verdict: string }[]).map((v) => v.verdict)).toEqual([
        "cancelled",
        "won",
        "cancelled",
      ]);
      // The slow variants were cut off mid-turn: their agents never reported.
      const finished = evidence.filter(
        (e) => e.kind === "command.finished" && e.node === "prototype",
      );
      expect(new Set(finished.map((e) => e.variant))).toEqual(new Set([2]));
      const agents = evidence.filter((e) => e.kind === "command.dispatched" && e.agent === "node");
      expect(agents).toHaveLength(3);
      // Releasing a DevBox waits for its process group to exit: nothing of the race is left.
      expect(racingProcesses()).toEqual([]);
    } finally {
      await host.close();
    }
  }, 60_000);
});
