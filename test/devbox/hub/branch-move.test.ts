import { execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DevBoxHub } from "../../../src/devbox/hub/hub.js";
import { isolatedGitEnv } from "../../helpers/git-env.js";

const RUN_BRANCH = "clustercode/7-run1";
const WINNER = `${RUN_BRANCH}-v2`;

let root: string;
let upstream: string;
let work: string;
let hub: DevBoxHub;

function git(cwd: string, args: string[]): string {
  return execFileSync("git", args, { cwd, env: isolatedGitEnv(root), encoding: "utf8" }).trim();
}

/** A commit of `file` on the work checkout's current branch, pushed to `branch` upstream. */
function commitAndPush(file: string, branch: string): string {
  writeFileSync(join(work, file), `${file}\n`);
  git(work, ["add", "."]);
  git(work, ["commit", "--quiet", "-m", file]);
  git(work, ["push", "--quiet", "--force", "origin", `HEAD:refs/heads/${branch}`]);
  return git(work, ["rev-parse", "HEAD"]);
}

const headOf = (branch: string) => git(upstream, ["rev-parse", `refs/heads/${branch}`]);

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "hub-move-"));
  upstream = join(root, "upstream.git");
  work = join(root, "work");
  mkdirSync(work);
  git(work, ["init", "--quiet", "--initial-branch=main"]);
  git(root, ["init", "--quiet", "--bare", upstream]);
  git(work, ["remote", "add", "origin", upstream]);
  commitAndPush("README.md", "main");
  hub = new DevBoxHub({
    onEvent: () => undefined,
    git: {
      stateDir: join(root, "state"),
      upstreamOf: () => Promise.resolve({ url: upstream, env: {} }),
      policyOf: () => Promise.resolve({ runBranch: RUN_BRANCH, allowWorkflowChanges: false }),
    },
  });
});

afterEach(async () => {
  await hub.close();
  rmSync(root, { recursive: true, force: true });
});

describe("the hub moves a run branch onto its race winner", () => {
  it("creates the run branch at the winner's head, and a move made again changes nothing", async () => {
    const sha = commitAndPush("WINNER", WINNER);
    const move = { branch: RUN_BRANCH, from: WINNER, sha };
    expect(await hub.moveBranch("run1", move)).toEqual({ branch: RUN_BRANCH, sha, how: "created" });
    expect(headOf(RUN_BRANCH)).toBe(sha);
    // The variant branch stays, as evidence of the race.
    expect(headOf(WINNER)).toBe(sha);
    // Performed again (a crash before its receipt): no second move.
    expect((await hub.moveBranch("run1", move)).how).toBe("already");
    // Performed again after the next node pushed to the run branch: that work is kept.
    const later = commitAndPush("LATER", RUN_BRANCH);
    expect((await hub.moveBranch("run1", move)).how).toBe("already");
    expect(headOf(RUN_BRANCH)).toBe(later);
  });

  it("fast-forwards a run branch the winner started from, and resets one pushed to during the race", async () => {
    const start = commitAndPush("START", RUN_BRANCH);
    const sha = commitAndPush("WINNER", WINNER);
    const moved = await hub.moveBranch("run1", { branch: RUN_BRANCH, from: WINNER });
    expect(moved).toEqual({ branch: RUN_BRANCH, sha, how: "fast-forward" });
    expect(git(upstream, ["merge-base", "--is-ancestor", start, RUN_BRANCH])).toBe("");

    // A commit the winner does not have landed on the run branch: the winner's head replaces it.
    git(work, ["checkout", "--quiet", "-b", "other", start]);
    commitAndPush("ASIDE", RUN_BRANCH);
    const again = await hub.moveBranch("run1", { branch: RUN_BRANCH, from: WINNER, sha });
    expect(again.how).toBe("reset");
    expect(headOf(RUN_BRANCH)).toBe(sha);
  });

  it("moves only the run's own branch, from one of its variant branches", async () => {
    const sha = commitAndPush("WINNER", WINNER);
    const main = headOf("main");
    await expect(hub.moveBranch("run1", { branch: "main", from: WINNER, sha })).rejects.toThrow(
      /may not move main/,
    );
    await expect(
      hub.moveBranch("run1", { branch: RUN_BRANCH, from: "clustercode/8-other", sha }),
    ).rejects.toThrow(/may not move/);
    expect(headOf("main")).toBe(main);
    expect(git(upstream, ["branch", "--list", RUN_BRANCH])).toBe("");
    // The allowed move still goes through.
    expect((await hub.moveBranch("run1", { branch: RUN_BRANCH, from: WINNER, sha })).how).toBe(
      "created",
    );
  });
});
