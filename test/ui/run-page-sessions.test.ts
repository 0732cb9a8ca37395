import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/store/embedded.js";
import { sessionSecret } from "../../src/ui/session-secret.js";
import { SignedCookies } from "../../src/ui/signed-cookies.js";
import { GATED, signIn, startPagesApp, type PagesApp } from "./app-pages.js";
import { decodeSettings } from "../../src/settings/index.js";

const INDEX = "/runs/Codertocat/Hello-World";

/** A `Cookie` header holding `value` as the session cookie, signed with `key`. */
function sessionCookie(key: Buffer, value: object): string {
  const set = new SignedCookies(key).set("clustercode_session", value, {
    maxAgeSeconds: 3600,
    secure: false,
  });
  return set.split(";")[0] ?? "";
}

describe("run-page sessions", () => {
  let pages: PagesApp;
  beforeAll(async () => {
    pages = await startPagesApp(GATED);
    pages.app.github.permissions.set("alice", "write");
  }, 60_000);
  afterAll(() => pages.close());

  it("refuse a session forged with a key derived from WEBHOOK_SECRET, as the pages once derived it", async () => {
    const derived = createHmac("sha256", "test-webhook-secret")
      .update("clustercode run page sessions")
      .digest();
    const now = Date.now();
    for (const value of [
      { login: "alice", iat: now, exp: now + 3_600_000 },
      { sid: "guessed", exp: now + 3_600_000 },
    ]) {
      const api = await fetch(`${pages.base}/api${INDEX}`, {
        headers: { cookie: sessionCookie(derived, value) },
      });
      expect(api.status).toBe(401);
    }
  });

  it("end a session on the server at sign-out: the cookie, replayed, signs no one in", async () => {
    const jar = await signIn(pages, "alice", INDEX);
    const page = await fetch(`${pages.base}${INDEX}`, { headers: { cookie: jar } });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('action="/auth/sign-out"');
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? "";
    expect(csrf).not.toBe("");

    // Without the page's token, nothing ends (a cross-site form cannot know it).
    const refused = await fetch(`${pages.base}/auth/sign-out`, {
      method: "POST",
      headers: { cookie: jar, "content-type": "application/x-www-form-urlencoded" },
      body: "csrf=wrong",
    });
    expect(refused.status).toBe(403);
    expect((await fetch(`${pages.base}/api${INDEX}`, { headers: { cookie: jar } })).status).toBe(
      200,
    );

    const out = await fetch(`${pages.base}/auth/sign-out`, {
      method: "POST",
      headers: { cookie: jar, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ csrf }).toString(),
    });
    expect(out.status).toBe(200);
    expect(await out.text()).toContain("You are signed out");
    expect(out.headers.getSetCookie().join()).toContain("clustercode_session=;");
    // The old cookie, replayed as it was: the server no longer knows its session.
    const replayed = await fetch(`${pages.base}/api${INDEX}`, { headers: { cookie: jar } });
    expect(replayed.status).toBe(401);
  });
});

describe("the session secret", () => {
  it("is generated once: two app instances over one store agree on it, and it is random", async () => {
    const first = await openStore({ settings: decodeSettings({}).store });
    const second = await openStore({
      settings: decodeSettings({
        CLUSTERCODE_DYNAMODB_ENDPOINT: first.endpoint,
        AWS_ACCESS_KEY_ID: "embedded",
        AWS_SECRET_ACCESS_KEY: "embedded",
      }).store,
    });
    try {
      const [a, b] = await Promise.all([
        sessionSecret(undefined, first.store),
        sessionSecret(undefined, second.store),
      ]);
      expect(a.equals(b)).toBe(true);
      expect(a.length).toBeGreaterThanOrEqual(32);
      expect((await sessionSecret("", second.store)).equals(a)).toBe(true);
      // CLUSTERCODE_SESSION_SECRET, when set, is the key.
      expect((await sessionSecret("operator-set", first.store)).toString()).toBe("operator-set");
      // Another store generates another secret.
      const other = await openStore({ settings: decodeSettings({}).store });
      try {
        expect((await sessionSecret(undefined, other.store)).equals(a)).toBe(false);
      } finally {
        await other.close();
      }
    } finally {
      await second.close();
      await first.close();
    }
  }, 30_000);
});
