import { generateKeyPairSync } from "node:crypto";
import nock from "nock";
import { Probot, ProbotOctokit } from "probot";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { InstallationPacing, pacedOctokit } from "../../src/github/client/pacing.js";

const { privateKey } = generateKeyPairSync("rsa", {
  modulusLength: 2048,
  privateKeyEncoding: { type: "pkcs1", format: "pem" },
  publicKeyEncoding: { type: "spki", format: "pem" },
});

const API = "https://api.github.com";

/** A Probot whose installation clients are paced (throttling on, Octokit's retry off). */
function pacedProbot(pacing: InstallationPacing): Probot {
  // Inner defaults run after pacedOctokit's: a retry-after second is 1 ms here.
  const Base = ProbotOctokit.defaults((options: { throttle?: object }) => ({
    ...options,
    retry: { enabled: false },
    throttle: { ...options.throttle, retryAfterBaseValue: 1 },
  }));
  return new Probot({
    appId: 1,
    privateKey,
    logLevel: "fatal",
    Octokit: pacedOctokit(Base, pacing),
  });
}

function comment(gh: Awaited<ReturnType<Probot["auth"]>>, repo: string, body: string) {
  return gh.request("POST /repos/{owner}/{repo}/issues/{issue_number}/comments", {
    owner: "o",
    repo,
    issue_number: 1,
    body,
  });
}

describe("pacing GitHub writes per installation", () => {
  /** The comments GitHub received, in order, by body. */
  let received: string[];
  beforeEach(() => {
    received = [];
    nock.disableNetConnect();
    nock(API)
      .persist()
      .post(/^\/app\/installations\/\d+\/access_tokens$/)
      .reply(201, { token: "t", expires_at: "2999-01-01T00:00:00Z", permissions: {} });
  });
  afterEach(() => {
    nock.cleanAll();
    nock.enableNetConnect();
  });

  it("does not hold one installation's writes behind another's pace", async () => {
    // An hour between two notifying writes of one installation: nothing of installation 2
    // may wait for that.
    const pacing = new InstallationPacing({ writeGapMs: 0, notificationGapMs: 3_600_000 });
    const probot = pacedProbot(pacing);
    nock(API)
      .persist()
      .post(/^\/repos\/o\/(one|two)\/issues\/1\/comments$/)
      .reply((_uri, body) => {
        received.push((body as { body: string }).body);
        return [201, { id: received.length }];
      });
    const one = await probot.auth(1);
    const two = await probot.auth(2);

    await comment(one, "one", "one-a");
    const oneB = comment(one, "one", "one-b");
    await comment(two, "two", "two-a");
    expect(received).toEqual(["one-a", "two-a"]);
    // Installations 1 and 2, and the app's own (JWT) client that minted their tokens.
    expect(pacing.size).toBe(3);

    // Drops installation 1's waiting write (the test does not wait the hour).
    const dropped = expect(oneB).rejects.toThrow();
    await pacing.limitersOf("1").notifications.key().stop({ dropWaitingJobs: true });
    await dropped;
  });

  it("sends a write GitHub refused with a secondary rate limit again after retry-after", async () => {
    const probot = pacedProbot(new InstallationPacing({ writeGapMs: 0, notificationGapMs: 0 }));
    nock(API)
      .post("/repos/o/one/issues/1/comments")
      .reply(403, { message: "You have exceeded a secondary rate limit." }, { "retry-after": "1" })
      .post("/repos/o/one/issues/1/comments")
      .reply(201, { id: 5 });
    const gh = await probot.auth(1);
    const { data } = await comment(gh, "one", "hello");
    expect(data.id).toBe(5);
    expect(nock.isDone()).toBe(true);
  });

  it("forgets the least recently used installations beyond its bound", () => {
    const pacing = new InstallationPacing({ maxInstallations: 2 });
    const first = pacing.limitersOf("1");
    pacing.limitersOf("2");
    pacing.limitersOf("3");
    expect(pacing.size).toBe(2);
    expect(pacing.limitersOf("1")).not.toBe(first);
    expect(pacing.limitersOf("3").write.key()).toBe(pacing.limitersOf("3").write.key());
  });
});
