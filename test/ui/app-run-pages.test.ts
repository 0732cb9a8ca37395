import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  CLIENT_SECRET,
  cookiesOf,
  GATED,
  labeled,
  signIn,
  startPagesApp,
  type PagesApp,
} from "./app-pages.js";

// One run for the file: the tests look at it in turn, and the last one approves it.
describe("the app's run pages", () => {
  let pages: PagesApp;
  let runId: string;
  let page: string;
  beforeAll(async () => {
    pages = await startPagesApp(GATED);
    pages.app.github.permissions.set("alice", "write");
    pages.app.github.permissions.set("walt", "write");
    pages.app.github.permissions.set("rita", "read");
    await pages.app.deliver("issues", labeled());
    runId = (await pages.app.waitForStatus("awaiting_input")).state.runId;
    page = `/runs/Codertocat/Hello-World/${runId}`;
  }, 60_000);
  afterEach(() => {
    expect(pages.app.github.problems).toEqual([]);
    expect(pages.app.errors).toEqual([]);
  });
  afterAll(() => pages.close());

  it("link every check run and the status comment to the page under CLUSTERCODE_PUBLIC_URL", () => {
    const created = pages.app.github.calls("POST", /\/check-runs$/);
    expect(created.length).toBeGreaterThanOrEqual(2);
    const links = Object.fromEntries(
      created.map((call) => [String(call.body.external_id), String(call.body.details_url)]),
    );
    expect(links).toEqual({
      [runId]: `${pages.base}${page}`,
      [`${runId}/1`]: `${pages.base}${page}#visit-1`,
    });
    const status = pages.app.github.comments.find((c) => c.body.includes("clustercode:run:"));
    expect(status?.body).toContain(`[run page](${pages.base}${page})`);
  });

  it("send an unsigned visitor to sign in with GitHub, and the API answers 401", async () => {
    const visit = await fetch(`${pages.base}${page}`, { redirect: "manual" });
    expect(visit.status).toBe(302);
    expect(visit.headers.get("location")).toBe(`/auth/sign-in?return=${encodeURIComponent(page)}`);
    const start = await fetch(`${pages.base}${visit.headers.get("location")}`, {
      redirect: "manual",
    });
    const authorize = new URL(start.headers.get("location") ?? "");
    expect(authorize.origin + authorize.pathname).toBe("https://github.com/login/oauth/authorize");
    expect(authorize.searchParams.get("client_id")).toBe("Iv1.testclientid");
    expect(authorize.searchParams.get("redirect_uri")).toBe(`${pages.base}/auth/callback`);
    const api = await fetch(`${pages.base}/api${page}`);
    expect(api.status).toBe(401);
    expect(await api.json()).toMatchObject({
      message: "Sign in with GitHub to see ClusterCode runs.",
    });
  });

  it("refuse a callback whose state was not started here, and a forged session", async () => {
    const start = await fetch(`${pages.base}/auth/sign-in?return=${page}`, { redirect: "manual" });
    const wrong = await fetch(
      `${pages.base}/auth/callback?code=${pages.codeFor("walt")}&state=other`,
      {
        redirect: "manual",
        headers: { cookie: cookiesOf(start) },
      },
    );
    expect(wrong.status).toBe(400);
    expect(await wrong.text()).toContain("This sign-in link is stale or was not started here.");
    const jar = await signIn(pages, "rita", page);
    const forged = jar.replace(/clustercode_session=([^.]+)/, (_all, body: string) => {
      const session = JSON.parse(Buffer.from(body, "base64url").toString()) as object;
      return `clustercode_session=${Buffer.from(JSON.stringify({ ...session, login: "walt" })).toString("base64url")}`;
    });
    const visit = await fetch(`${pages.base}${page}`, {
      redirect: "manual",
      headers: { cookie: forged },
    });
    expect(visit.status).toBe(302);
  });

  it("show the run to a reader, refuse a stranger, and keep secrets and tokens off the page", async () => {
    const stranger = await signIn(pages, "sam", page);
    const refused = await fetch(`${pages.base}${page}`, { headers: { cookie: stranger } });
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain("@sam needs read access to Codertocat/Hello-World");

    const reader = await signIn(pages, "rita", page);
    const seen = await fetch(`${pages.base}${page}`, { headers: { cookie: reader } });
    expect(seen.status).toBe(200);
    const html = await seen.text();
    expect(html).toContain(">build<");
    expect(html).toContain('data-decision="approved">Approve</button>');
    expect(html).not.toContain("<script>window.pwned");
    expect(html).toContain("&lt;script&gt;window.pwned = 1&lt;/script&gt;");
    for (const secret of [CLIENT_SECRET, "test-webhook-secret", "ghu_rita", "ghs_faketoken"])
      expect(html).not.toContain(secret);
    const api = await fetch(`${pages.base}/api${page}`, { headers: { cookie: reader } });
    expect(await api.json()).toMatchObject({ runId, status: "awaiting_input", activeNode: "gate" });
    const index = await fetch(`${pages.base}/api/runs/Codertocat/Hello-World`, {
      headers: { cookie: reader },
    });
    expect(
      ((await index.json()) as { runs: { runId: string }[] }).runs.map((r) => r.runId),
    ).toEqual([runId]);
  });

  it("take Approve only with the page's CSRF token and from someone who may approve, as /approve", async () => {
    const csrfOf = async (jar: string) =>
      /data-csrf="([0-9a-f]+)"/.exec(
        await (await fetch(`${pages.base}${page}`, { headers: { cookie: jar } })).text(),
      )?.[1] ?? "";
    const post = (jar: string, token: string) =>
      fetch(`${pages.base}/api${page}/answer`, {
        method: "POST",
        headers: { cookie: jar, "content-type": "application/json", "x-clustercode-csrf": token },
        body: JSON.stringify({ decision: "approved", visit: 1 }),
      });
    const reader = await signIn(pages, "rita", page);
    const refused = await post(reader, await csrfOf(reader));
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({
      message:
        "ClusterCode did not accept this answer: @rita needs write access to Codertocat/Hello-World for this.",
    });
    const writer = await signIn(pages, "walt", page);
    const noToken = await post(writer, await csrfOf(reader));
    expect(noToken.status).toBe(403);
    expect(((await noToken.json()) as { message: string }).message).toContain("CSRF token");
    expect((await pages.app.host.store.getRun(runId))?.status).toBe("awaiting_input");

    const approved = await post(writer, await csrfOf(writer));
    expect(await approved.json()).toEqual({ ok: true, message: "Approved by @walt." });
    await pages.app.waitForStatus("succeeded");
    const answers = (await pages.app.host.store.listEvidence(runId))
      .map((record) => record.entry as { kind: string })
      .filter((entry) => entry.kind === "approval.answered");
    expect(answers).toEqual([
      expect.objectContaining({
        decision: "approved",
        actor: "walt",
        where: `${pages.base}${page}`,
      }),
    ]);
  });
});
