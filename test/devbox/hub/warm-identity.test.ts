/**
 * The walls around a warm ECS task's identity, tested as the agent in that task would try them:
 * it fetches its own repository's default branch read-only and waits for its claim, and can do
 * nothing else; a claim goes to exactly one task and ends the identity.
 */
import { execFile, execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DevBoxHub } from "../../../src/devbox/hub/hub.js";
import { hubGitAuthEnv } from "../../../src/devbox/hub/git/git-auth.js";
import { providerUpstreams } from "../../../src/devbox/hub/provider-proxy.js";
import { decodeSettings } from "../../../src/settings/index.js";
import { isolatedGitEnv } from "../../helpers/git-env.js";
import {
  warmRoute,
  type WarmClaim,
  type WarmIdentities,
} from "../../../src/devbox/warm-protocol.js";

let root: string;
let hub: DevBoxHub;
let desk: WarmIdentities;
const SHA = "a".repeat(40);
const CLAIM: WarmClaim = {
  devboxId: "run1.a.1",
  token: "the-devbox-token",
  env: { CLUSTERCODE_BRANCH: "clustercode/1-run1" },
};

const gitEnv = (env: Record<string, string> = {}) => isolatedGitEnv(root, env);

function git(cwd: string, args: string[]): string {
  return execFileSync("git", args, { cwd, env: gitEnv(), encoding: "utf8", stdio: "pipe" });
}

/** Git against the hub (in this process, so never synchronous). */
async function tryGit(cwd: string, args: string[], token: string) {
  try {
    const run = promisify(execFile);
    const { stdout } = await run("git", args, { cwd, env: gitEnv(hubGitAuthEnv(token)) });
    return { ok: true, output: stdout };
  } catch (error) {
    return { ok: false, output: String((error as { stderr?: string }).stderr ?? "") };
  }
}

/** A bare upstream with `main` and another branch. */
function upstream(name: string): string {
  const seed = join(root, `seed-${name}`);
  mkdirSync(seed);
  git(seed, ["init", "--quiet", "--initial-branch=main"]);
  writeFileSync(join(seed, "README.md"), `${name}\n`);
  git(seed, ["add", "."]);
  git(seed, ["commit", "--quiet", "-m", "first"]);
  git(seed, ["checkout", "--quiet", "-b", "private-work"]);
  writeFileSync(join(seed, "notes.txt"), "not on the default branch\n");
  git(seed, ["add", "."]);
  git(seed, ["commit", "--quiet", "-m", "private"]);
  const bare = join(root, `${name}.git`);
  git(root, ["clone", "--quiet", "--bare", seed, bare]);
  return bare;
}

async function call(path: string, token: string, init: RequestInit = {}) {
  const response = await fetch(`${hub.url}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
  });
  return { status: response.status, body: await response.text() };
}

const ready = (warmId: string, token: string) =>
  call(warmRoute(warmId, "ready"), token, {
    method: "POST",
    body: JSON.stringify({ sha: SHA, setUp: true }),
  });
const poll = (warmId: string, token: string, wait = 0) =>
  call(`${warmRoute(warmId, "claim")}?wait=${wait}`, token);

beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), "warm-identity-"));
  const sources: Record<string, string> = {
    "acme/widgets": upstream("widgets"),
    "acme/other": upstream("other"),
  };
  hub = new DevBoxHub({
    onEvent: () => undefined,
    providers: providerUpstreams(
      decodeSettings({ ANTHROPIC_API_KEY: "sk-ant-held-by-the-app" }).providers,
    ),
    git: {
      stateDir: join(root, "state"),
      upstreamOf: () => Promise.resolve({ url: sources["acme/widgets"]!, env: {} }),
      policyOf: () => Promise.resolve({ runBranch: "x", allowWorkflowChanges: false }),
    },
    warm: {
      stateDir: join(root, "state"),
      upstreamOf: (repo) => Promise.resolve({ url: sources[repo] ?? "/nowhere", env: {} }),
    },
  });
  await hub.listen();
  desk = hub.warmIdentities!;
});

afterEach(async () => {
  await hub.close();
  rmSync(root, { recursive: true, force: true });
});

describe("a warm identity", () => {
  it("clones its repository's default branch, and nothing else, and cannot push", async () => {
    const identity = desk.issue("acme/widgets", "main");
    const clone = join(root, "clone");
    const cloned = await tryGit(root, ["clone", "--quiet", identity.gitUrl, clone], identity.token);
    expect(cloned.ok, cloned.output).toBe(true);
    expect(git(clone, ["branch", "-a", "--format=%(refname)"]).trim().split("\n")).toEqual([
      "refs/heads/main",
      "refs/remotes/origin/HEAD",
      "refs/remotes/origin/main",
    ]);
    const other = await tryGit(clone, ["fetch", "origin", "private-work"], identity.token);
    expect(other.ok).toBe(false);

    writeFileSync(join(clone, "x.txt"), "x\n");
    git(clone, ["add", "."]);
    git(clone, ["commit", "--quiet", "-m", "x"]);
    const pushed = await tryGit(clone, ["push", "origin", "HEAD:main"], identity.token);
    expect(pushed.ok).toBe(false);
    const pushedElsewhere = await tryGit(clone, ["push", "origin", "HEAD:new"], identity.token);
    expect(pushedElsewhere.ok).toBe(false);
  });

  it("cannot fetch another repository, nor with a wrong token", async () => {
    const other = desk.issue("acme/other", "main");
    const widgetsUrl = other.gitUrl.replace("acme/other.git", "acme/widgets.git");
    const crossed = await tryGit(root, ["ls-remote", widgetsUrl], other.token);
    expect(crossed.ok).toBe(false);
    const own = desk.issue("acme/widgets", "main");
    const wrong = await tryGit(root, ["ls-remote", own.gitUrl], other.token);
    expect(wrong.ok).toBe(false);
    expect(wrong.output).toMatch(/401|Authentication|could not read/i);
  });

  it("cannot reach the DevBox routes, their git, the provider proxy or the egress proxy", async () => {
    const { token: devboxToken } = hub.register({ devboxId: "run1.a.1", runId: "run1" });
    hub.allowEgress("run1.a.1", undefined);
    hub.providerEnv("run1.a.1", ["ANTHROPIC_API_KEY"]);
    const { warmId, token } = desk.issue("acme/widgets", "main");
    for (const id of [warmId, "run1.a.1"]) {
      const base = `/internal/devboxes/${id}`;
      expect((await call(`${base}/commands?wait=0`, token)).status).toBe(401);
      expect((await call(`${base}/heartbeat`, token, { method: "POST", body: "{}" })).status).toBe(
        401,
      );
      const result = { commandId: "c1", exitCode: 0, output: "", durationMs: 1 };
      const posted = await call(`${base}/results`, token, {
        method: "POST",
        body: JSON.stringify(result),
      });
      expect(posted.status).toBe(401);
      expect((await call(`${base}/providers/anthropic/v1/messages`, token)).status).toBe(401);
      const gitRoute = `${base}/git/acme/widgets.git/info/refs?service=git-upload-pack`;
      expect((await call(gitRoute, token)).status).toBe(401);
    }
    expect(await egressStatus(warmId, token)).toBe(407);
    expect(await egressStatus("run1.a.1", token)).toBe(407);
    // The DevBox's own token still works: the walls are the warm identity's, not a broken hub.
    expect((await call("/internal/devboxes/run1.a.1/commands?wait=0", devboxToken)).status).toBe(
      200,
    );
    // Nor another warm route than its own.
    const other = desk.issue("acme/widgets", "main");
    expect((await ready(other.warmId, token)).status).toBe(401);
  });

  it("waits for its claim once ready; takes it once; is useless afterwards", async () => {
    const identity = desk.issue("acme/widgets", "main");
    const { warmId, token } = identity;
    // Not ready: nothing is offered to it, and it may not wait yet.
    expect(desk.isReady(warmId)).toBe(false);
    expect(await desk.offer(warmId, CLAIM, 1000)).toBe(false);
    const fresh = desk.issue("acme/widgets", "main");
    expect((await poll(fresh.warmId, fresh.token)).status).toBe(409);
    expect((await ready(fresh.warmId, fresh.token)).status).toBe(200);
    // Ready once it waits for its claim: a task that stopped polling may be gone.
    expect(desk.isReady(fresh.warmId)).toBe(false);

    const waiting = poll(fresh.warmId, fresh.token, 10);
    await until(() => desk.isReady(fresh.warmId));
    const offered = desk.offer(fresh.warmId, CLAIM, 5000);
    const answer = await waiting;
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ claim: CLAIM });
    expect(await offered).toBe(true);

    // Claimed: every route refuses the identity from now on.
    expect((await poll(fresh.warmId, fresh.token)).status).toBe(401);
    expect((await ready(fresh.warmId, fresh.token)).status).toBe(401);
    const fetched = await tryGit(root, ["ls-remote", fresh.gitUrl], fresh.token);
    expect(fetched.ok).toBe(false);
    // The one offered a claim before it was ready was refused the offer, nothing more.
    expect((await ready(warmId, token)).status).toBe(200);
  });

  it("never hands a claim offered to one task to another", async () => {
    const first = desk.issue("acme/widgets", "main");
    const second = desk.issue("acme/widgets", "main");
    await ready(first.warmId, first.token);
    await ready(second.warmId, second.token);
    const firstWaits = poll(first.warmId, first.token, 10);
    await until(() => desk.isReady(first.warmId));
    const secondWaits = poll(second.warmId, second.token, 1);
    const offered = desk.offer(first.warmId, CLAIM, 5000);
    expect(JSON.parse((await secondWaits).body)).toEqual({ wait: true });
    expect(JSON.parse((await firstWaits).body)).toEqual({ claim: CLAIM });
    expect(await offered).toBe(true);
    // The other one is still warm, with no claim, for the next.
    expect(desk.isReady(second.warmId)).toBe(true);
    expect(JSON.parse((await poll(second.warmId, second.token)).body)).toEqual({ wait: true });
  });

  it("is revoked when it does not take its claim in time", async () => {
    const { warmId, token } = desk.issue("acme/widgets", "main");
    await ready(warmId, token);
    // It polled a moment ago, so it is offered the claim, but it does not come back for it.
    expect(JSON.parse((await poll(warmId, token)).body)).toEqual({ wait: true });
    expect(await desk.offer(warmId, CLAIM, 50)).toBe(false);
    expect((await poll(warmId, token)).status).toBe(401);
  });
});

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 2000 && !check(); i++) await new Promise((done) => setTimeout(done, 5));
  if (!check()) throw new Error("timed out");
}

/** What the egress proxy answers a CONNECT with `user:key` as its credentials. */
function egressStatus(user: string, key: string): Promise<number> {
  const url = new URL(hub.url);
  const auth = Buffer.from(`${user}:${key}`).toString("base64");
  return new Promise((resolve, reject) => {
    const connect = httpRequest({
      host: url.hostname,
      port: url.port,
      method: "CONNECT",
      path: "registry.npmjs.org:443",
      headers: { "proxy-authorization": `Basic ${auth}` },
    });
    connect.once("connect", (response, socket) => {
      socket.destroy();
      resolve(response.statusCode ?? 0);
    });
    connect.once("response", (response) => resolve(response.statusCode ?? 0));
    connect.once("error", reject);
    connect.end();
  });
}
