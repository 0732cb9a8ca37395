import nock from "nock";
import { ProbotOctokit } from "probot";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AppWorkflowFiles } from "../../src/github/pages/app-workflow-files.js";

const API = "https://api.github.com";
const REPO = "/repos/Codertocat/Hello-World";
const PATH = ".clustercode/workflow.yml";
const BEFORE =
  "# Ours.\nversion: 1\nname: main\non:\n  label: clustercode\nnodes:\n  build:\n    kind: run\n    run: make\nedges:\n  - { from: build, to: done }\n";
const AFTER = BEFORE.replace("run: make", "run: make all");
const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64");

describe("saving from the app's editor", () => {
  let files: AppWorkflowFiles;
  let bodies: Record<string, unknown>[];
  beforeEach(() => {
    nock.disableNetConnect();
    bodies = [];
    const gh = new ProbotOctokit({
      auth: { token: "ghs_test" },
      retry: { enabled: false },
      throttle: { enabled: false },
    });
    files = new AppWorkflowFiles({ client: () => Promise.resolve(gh) });
    nock(API).persist().get(REPO).reply(200, { default_branch: "main" });
  });
  afterEach(() => {
    nock.cleanAll();
    nock.enableNetConnect();
  });

  const record = (_uri: string, body: Record<string, unknown>) => {
    bodies.push(body);
    return true;
  };

  it("opens a pull request on behalf of the signed-in user: a branch, a commit with them as co-author, the PR", async () => {
    nock(API)
      .get(`${REPO}/collaborators/octocat/permission`)
      .reply(200, { permission: "write" })
      .get(`${REPO}/contents/${encodeURIComponent(PATH)}`)
      .query({ ref: "main" })
      .reply(200, { type: "file", sha: "blob1", content: b64(BEFORE) })
      .get(`${REPO}/git/ref/${encodeURIComponent("heads/main")}`)
      .reply(200, { object: { sha: "head0" } })
      .post(`${REPO}/git/refs`, (body: Record<string, unknown>) => record("ref", body))
      .reply(201, {})
      .get("/users/octocat")
      .reply(200, { login: "octocat", id: 583231 })
      .put(`${REPO}/contents/${encodeURIComponent(PATH)}`, (body: Record<string, unknown>) =>
        record("file", body),
      )
      .reply(200, { content: { sha: "blob2" } })
      .get(`${REPO}/contents/${encodeURIComponent(".clustercode/layout.json")}`)
      .query(true)
      .reply(404, { message: "Not Found" })
      .put(
        `${REPO}/contents/${encodeURIComponent(".clustercode/layout.json")}`,
        (body: Record<string, unknown>) => record("layout", body),
      )
      .reply(201, { content: { sha: "blob3" } })
      .post(`${REPO}/pulls`, (body: Record<string, unknown>) => record("pull", body))
      .reply(201, { number: 7, html_url: "https://github.com/Codertocat/Hello-World/pull/7" });

    const result = await files.save({
      repo: "Codertocat/Hello-World",
      path: PATH,
      yaml: AFTER,
      version: "blob1",
      positions: { build: { x: 40, y: 60 } },
      viewer: { login: "octocat" },
    });
    expect(result).toEqual({
      ok: true,
      version: "blob2",
      message: "Opened pull request #7.",
      pullRequest: "https://github.com/Codertocat/Hello-World/pull/7",
    });
    const [ref, file, layout, pull] = bodies;
    const branch = String(ref?.ref).replace("refs/heads/", "");
    expect(ref).toMatchObject({ sha: "head0" });
    expect(branch).toMatch(/^clustercode\/edit\/workflow-[a-z0-9]+$/);
    expect(file).toMatchObject({ branch, sha: "blob1", content: b64(AFTER) });
    expect(String(file?.message)).toBe(
      `Edit ${PATH} in the ClusterCode editor\n\nCo-authored-by: octocat <583231+octocat@users.noreply.github.com>`,
    );
    expect(JSON.parse(Buffer.from(String(layout?.content), "base64").toString())).toEqual({
      version: 1,
      workflows: { [PATH]: { build: { x: 40, y: 60 } } },
    });
    expect(pull).toMatchObject({ head: branch, base: "main", title: `Edit ${PATH}` });
    expect(nock.pendingMocks().filter((mock) => !mock.endsWith(REPO))).toEqual([]);
  });

  it("refuses without write access, and with 409 when the file moved on since it was opened", async () => {
    nock(API)
      .get(`${REPO}/collaborators/mallory/permission`)
      .reply(200, { permission: "read" })
      .get(`${REPO}/collaborators/octocat/permission`)
      .reply(200, { permission: "admin" })
      .get(`${REPO}/contents/${encodeURIComponent(PATH)}`)
      .query({ ref: "main" })
      .reply(200, { type: "file", sha: "blob9", content: b64(BEFORE) });
    const request = {
      repo: "Codertocat/Hello-World",
      path: PATH,
      yaml: AFTER,
      version: "blob1",
      positions: {},
    };
    expect(await files.save({ ...request, viewer: { login: "mallory" } })).toEqual({
      ok: false,
      status: 403,
      message: "@mallory needs write access to Codertocat/Hello-World to propose a change.",
    });
    expect(await files.save({ ...request, viewer: { login: "octocat" } })).toMatchObject({
      ok: false,
      status: 409,
    });
    expect(bodies).toEqual([]);
  });
});
