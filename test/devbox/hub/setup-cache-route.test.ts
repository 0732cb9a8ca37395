/**
 * The hub's setup cache route, called as an injected agent would: with its own token or
 * another DevBox's, with raw paths, lying headers and oversized bodies. Each wall holds with
 * both stores: the app host's directory, and S3 (a loopback fake speaking the REST protocol).
 */
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DevBoxHub } from "../../../src/devbox/hub/hub.js";
import type { SetupCacheStore } from "../../../src/devbox/hub/cache/cache-store.js";
import { DirectoryCacheStore } from "../../../src/devbox/hub/cache/directory-store.js";
import {
  objectKey,
  S3CacheStore,
  setupCacheS3Client,
} from "../../../src/devbox/hub/cache/s3-store.js";
import { setupCacheDir } from "../../../src/devbox/local/setup-cache-dirs.js";
import { FakeS3 } from "./fake-s3.js";

const REPO = "https://github.com/acme/widgets.git";
const KEY = "0123456789abcdef0123456789abcdef01234567";
const OTHER_KEY = "fedcba9876543210fedcba9876543210fedcba98";
const MAX_ENTRY = 64 * 1024;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

let root: string;
let hub: DevBoxHub;
let fakeS3: FakeS3 | undefined;

/** One request with a raw path (no normalising of `..`), as a DevBox could send it. */
function call(
  method: string,
  path: string,
  options: { token?: string; body?: Buffer; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const url = new URL(hub.url);
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      { host: url.hostname, port: url.port, method, path, headers },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: Buffer.concat(chunks),
          }),
        );
      },
    );
    // A refusal may close the connection while the body is still going out.
    request.on("error", (error: NodeJS.ErrnoException) =>
      error.code === "EPIPE" || error.code === "ECONNRESET" ? undefined : reject(error),
    );
    request.end(options.body);
  });
}

const sha = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");
const path = (id: string, key: string) => `/internal/devboxes/${id}/cache/${key}`;

function put(id: string, token: string, key: string, body: Buffer, digest = sha(body)) {
  return call("PUT", path(id, key), {
    token,
    body,
    headers: { "content-length": String(body.length), "x-clustercode-sha256": digest },
  });
}

/** Registers a DevBox of `repository` on `branch` (from `baseBranch`); its token. */
function devbox(id: string, branch: string, baseBranch: string, repository = REPO): string {
  const { token } = hub.register({ devboxId: id, runId: `run-${id}` });
  hub.scopeSetupCache(id, { repository, branch, baseBranch });
  return token;
}

const stores = {
  "a directory of the app's host": () =>
    Promise.resolve(
      new DirectoryCacheStore({
        stateDir: join(root, "state"),
        maxBytes: 1024 * 1024,
        maxEntryBytes: MAX_ENTRY,
      }) as SetupCacheStore,
    ),
  "an S3 bucket": async () => {
    fakeS3 = new FakeS3("setup-cache");
    const endpoint = await fakeS3.listen();
    const credentials = { accessKeyId: "test", secretAccessKey: "test" };
    const client = setupCacheS3Client({ region: "eu-west-1", endpoint, credentials });
    return new S3CacheStore({ client, bucket: "setup-cache", maxEntryBytes: MAX_ENTRY });
  },
};

/** Every entry kept, as `<scope path>/<key>`, whichever the store. */
function keptEntries(): string[] {
  if (fakeS3 !== undefined) return [...fakeS3.objects.keys()].sort();
  const kept: string[] = [];
  const walk = (dir: string) => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(dir, entry.name));
      else kept.push(relative(join(root, "state", "cache"), join(dir, entry.name)));
    }
  };
  walk(join(root, "state", "cache"));
  return kept.sort();
}

/** Where the store keeps entry `key` of `branch` (a directory holds its pointer there). */
function entryOf(branch: string, key: string): string {
  if (fakeS3 !== undefined) return objectKey({ repository: REPO, branch }, key);
  const dir = setupCacheDir(join(root, "state"), REPO, branch);
  return relative(join(root, "state", "cache"), join(dir, `${key}.sha256`));
}

describe.each(Object.entries(stores))("the setup cache route on %s", (_name, makeStore) => {
  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), "hub-cache-"));
    hub = new DevBoxHub({ onEvent: () => {}, setupCache: await makeStore() });
    await hub.listen();
  });
  afterEach(async () => {
    await hub.close();
    await fakeS3?.close();
    fakeS3 = undefined;
    await rm(root, { recursive: true, force: true });
  });

  it("saves to the run branch, restores it, and falls back to the base branch's entry", async () => {
    const onMain = devbox("d-main", "main", "main");
    const archive = Buffer.from("tar bytes of node_modules");
    expect((await put("d-main", onMain, KEY, archive)).status).toBe(201);
    const onFeature = devbox("d-feature", "feature", "main");
    const restored = await call("GET", path("d-feature", KEY), { token: onFeature });
    expect(restored.status).toBe(200);
    expect(restored.body.equals(archive)).toBe(true);
    expect(restored.headers["x-clustercode-sha256"]).toBe(sha(archive));
    // The run branch's own entry comes first.
    const own = Buffer.from("the feature branch's own");
    expect((await put("d-feature", onFeature, KEY, own)).status).toBe(201);
    const again = await call("GET", path("d-feature", KEY), { token: onFeature });
    expect(again.body.toString()).toBe("the feature branch's own");
    const miss = await call("GET", path("d-feature", OTHER_KEY), { token: onFeature });
    expect(miss.status).toBe(404);
    expect(miss.headers["x-clustercode-cache-miss"]).toBe("1");
  });

  it("never lets a pull request's run branch write the base branch's scope", async () => {
    const fromPr = devbox("d-pr", "clustercode/7-pr", "main");
    const planted = Buffer.from("poisoned node_modules");
    expect((await put("d-pr", fromPr, KEY, planted)).status).toBe(201);
    expect(keptEntries()).toContain(entryOf("clustercode/7-pr", KEY));
    expect(keptEntries()).not.toContain(entryOf("main", KEY));
    // A run on the default branch does not restore what the pull request's run saved.
    const onMain = devbox("d-main", "main", "main");
    const read = await call("GET", path("d-main", KEY), { token: onMain });
    expect(read.status).toBe(404);
  });

  it("refuses another DevBox's token, and scopes each DevBox to its own repository", async () => {
    const owner = devbox("d-owner", "main", "main");
    expect((await put("d-owner", owner, KEY, Buffer.from("kept"))).status).toBe(201);
    const stranger = devbox("d-stranger", "main", "main", "https://github.com/evil/repo.git");
    const asOwner = { token: stranger };
    expect((await call("GET", path("d-owner", KEY), asOwner)).status).toBe(401);
    expect((await put("d-owner", stranger, KEY, Buffer.from("overwrite"))).status).toBe(401);
    expect((await call("GET", path("d-owner", KEY))).status).toBe(401);
    // With its own id it sees its own repository's scope: not the owner's entry.
    expect((await call("GET", path("d-stranger", KEY), asOwner)).status).toBe(404);
    const kept = await call("GET", path("d-owner", KEY), { token: owner });
    expect(kept.body.toString()).toBe("kept");
  });

  it("refuses keys with .., slashes or anything else, writing nothing", async () => {
    const token = devbox("d1", "main", "main");
    const body = Buffer.from("x");
    const bad = [
      "../commands",
      "..%2F..%2Fetc",
      `${KEY}/extra`,
      `${KEY}?scope=main`,
      KEY.toUpperCase(),
      KEY.slice(1),
      `${KEY}0`,
      "",
    ];
    for (const key of bad) {
      const answer = await put("d1", token, key, body);
      expect(answer.status, key).toBe(400);
      expect(answer.body.toString()).toContain("40 hex digits");
      expect((await call("GET", path("d1", key), { token })).status, key).toBe(400);
    }
    expect(keptEntries()).toEqual([]);
  });

  it("refuses an oversized or mismatched body without keeping any of it", async () => {
    const token = devbox("d1", "main", "main");
    expect((await put("d1", token, KEY, Buffer.from("good"))).status).toBe(201);
    const before = keptEntries();
    // Announced larger than the limit: refused before a byte is read.
    const huge = await call("PUT", path("d1", KEY), {
      token,
      headers: { "content-length": String(1024 ** 3), "x-clustercode-sha256": sha(Buffer.of()) },
    });
    expect(huge.status).toBe(413);
    expect(huge.body.toString()).toContain(`at most ${MAX_ENTRY} bytes`);
    // No length at all (chunked, as long as the sender likes): not taken either.
    const chunked = await call("PUT", path("d1", KEY), {
      token,
      body: Buffer.from("good"),
      headers: { "transfer-encoding": "chunked", "x-clustercode-sha256": sha(Buffer.from("good")) },
    });
    expect(chunked.status).toBe(411);
    // A body that is not what its checksum says: nothing of it is kept, the old entry stays.
    const lying = await put("d1", token, KEY, Buffer.alloc(MAX_ENTRY, 1), sha(Buffer.from("x")));
    expect(lying.status).toBe(400);
    expect(keptEntries()).toEqual(before);
    const kept = await call("GET", path("d1", KEY), { token });
    expect(kept.body.toString()).toBe("good");
    if (fakeS3 !== undefined) {
      expect(fakeS3.requests.filter((request) => request.method === "PUT")).toHaveLength(2);
    }
  });

  it("closes the cache once the DevBox reported ready: its commands cannot write it", async () => {
    const token = devbox("d1", "main", "main");
    const ready = await call("POST", "/internal/devboxes/d1/ready", {
      token,
      body: Buffer.from(JSON.stringify({ ok: true, sha: "a".repeat(40) })),
      headers: { "content-type": "application/json" },
    });
    expect(ready.status).toBe(200);
    const late = await put("d1", token, KEY, Buffer.from("after setup"));
    expect(late.status).toBe(409);
    expect((await call("GET", path("d1", KEY), { token })).status).toBe(409);
    expect(keptEntries()).toEqual([]);
  });
});

describe("a hub without a setup cache store", () => {
  it("answers 404 without the miss header: the agent then caches nothing", async () => {
    root = mkdtempSync(join(tmpdir(), "hub-cache-"));
    hub = new DevBoxHub({ onEvent: () => {} });
    await hub.listen();
    try {
      const token = devbox("d1", "main", "main");
      const answer = await call("GET", path("d1", KEY), { token });
      expect(answer.status).toBe(404);
      expect(answer.headers["x-clustercode-cache-miss"]).toBeUndefined();
    } finally {
      await hub.close();
      await rm(root, { recursive: true, force: true });
    }
  });
});
