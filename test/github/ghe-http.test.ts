import { execFileSync } from "node:child_process";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GitHttpServer } from "./helpers/git-http-server.js";
import { SHIP_WORKFLOW, startTestApp, type TestApp } from "./helpers/harness.js";
import { commentOn, labeledIssue, OWNER, REPO } from "../helpers/payloads.js";

const labeled = () => labeledIssue(7);

const approve = () => commentOn(7, "/approve", "bob");

describe("a GitHub Enterprise Server over plain HTTP", () => {
  let app: TestApp;
  let git: GitHttpServer;
  let host: string;
  beforeEach(async () => {
    // The fake's installation token: the only credentials the git server takes.
    git = new GitHttpServer("ghs_faketoken");
    host = await git.listen();
    app = await startTestApp(SHIP_WORKFLOW, {
      githubApi: `http://${host}/api/v3`,
      env: { GHE_HOST: host, GHE_PROTOCOL: "http" },
      cloneDirectly: false,
    });
    git.repositories.set(`${OWNER}/${REPO}`, app.remote);
    app.github.permissions.set("alice", "write");
    app.github.permissions.set("bob", "write");
  });
  afterEach(async () => {
    expect(app.github.problems).toEqual([]);
    expect(app.errors).toEqual([]);
    await app.close();
    await git.close();
  });

  it("runs from label to shipped: DevBoxes clone and push over http with the installation token", async () => {
    await app.deliver("issues", labeled());
    const waiting = await app.waitForStatus("awaiting_input");
    const branch = waiting.definition.branch;
    await app.deliver("issue_comment", approve());
    const done = await app.waitForStatus("succeeded");
    expect(done.state.visits.map((v) => `${v.node}:${v.outcome}`)).toEqual([
      "build:succeeded",
      "gate:approved",
    ]);
    // The API went to the server's /api/v3, the git traffic to the same host over http.
    expect(app.github.calls("POST", /access_tokens$/).length).toBeGreaterThan(0);
    const gitPath = `/${OWNER}/${REPO}.git`;
    expect(git.requests.some((r) => r.path === `${gitPath}/git-upload-pack`)).toBe(true);
    expect(git.requests.some((r) => r.path === `${gitPath}/git-receive-pack`)).toBe(true);
    const sent = new Set(
      git.requests.flatMap((r) => (r.credentials === undefined ? [] : [r.credentials])),
    );
    expect([...sent]).toEqual(["x-access-token:ghs_faketoken"]);
    // The checkpoint reached the served repository.
    const out = execFileSync("git", ["show", `${branch}:out.txt`], {
      cwd: app.remote,
      encoding: "utf8",
    });
    expect(out).toBe("built\n");
  }, 60_000);
});
