import { ProbotOctokit } from "probot";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { upsertCheckRun, newCheckRunMemo } from "../../src/github/surfaces/check-runs.js";
import { createMarkedComment } from "../../src/github/surfaces/comments.js";
import type { GitHub } from "../../src/github/client/github.js";
import { BOT_LOGIN, FakeGitHub } from "./helpers/fake-github.js";

const repo = { owner: "Codertocat", repo: "Hello-World", defaultBranch: "main" };
let github: FakeGitHub;
let gh: GitHub;

beforeEach(() => {
  github = new FakeGitHub();
  github.install();
  // Octokit's retry plugin is on, as in production: it must not re-send a create.
  gh = new ProbotOctokit({
    auth: { token: "ghs_test" },
    throttle: { enabled: false },
  });
});
afterEach(() => {
  github.uninstall();
  expect(github.problems).toEqual([]);
});

describe("creating a surface after GitHub wrote it and answered 502", () => {
  it("finds the status comment by its marker and posts nothing new", async () => {
    const marker = "<!-- clustercode:run:r1 -->";
    github.outages.push({ method: "POST", path: /\/issues\/4\/comments$/, wrote: true });
    const id = await createMarkedComment(gh, repo, 4, marker, `${marker}\nstatus`, BOT_LOGIN);
    expect(github.comments.map((comment) => comment.body)).toEqual([`${marker}\nstatus`]);
    expect(id).toBe(github.comments[0]?.id);
    expect(github.calls("POST", /\/issues\/4\/comments$/)).toHaveLength(1);
  });

  it("sends the comment again when the failed attempt wrote nothing", async () => {
    const marker = "<!-- clustercode:run:r1 -->";
    github.outages.push({ method: "POST", path: /\/issues\/4\/comments$/ });
    await createMarkedComment(gh, repo, 4, marker, `${marker}\nstatus`, BOT_LOGIN);
    expect(github.comments).toHaveLength(1);
    expect(github.calls("POST", /\/issues\/4\/comments$/)).toHaveLength(2);
  });

  it("finds the check run by its external id and creates no second one", async () => {
    github.outages.push({ method: "POST", path: /\/check-runs$/, wrote: true });
    const spec = {
      externalId: "r1",
      name: "ClusterCode · review",
      status: "in_progress" as const,
      title: "running",
      summary: "Run `r1`: running.",
    };
    const memo = newCheckRunMemo();
    memo.listed = true;
    const url = await upsertCheckRun(gh, repo, memo, spec, { sha: "abc", earlier: [] });
    expect(github.checkRuns.map((run) => run.external_id)).toEqual(["r1"]);
    expect(url).toBe(github.checkRuns[0]?.html_url);
    expect(github.calls("POST", /\/check-runs$/)).toHaveLength(1);
    // The next sync updates that one.
    await upsertCheckRun(
      gh,
      repo,
      memo,
      { ...spec, status: "completed", conclusion: "success" },
      { sha: "abc", earlier: [] },
    );
    expect(github.checkRuns).toHaveLength(1);
  });
});
