import { randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { exchangeWebFlowCode, getWebFlowAuthorizationUrl } from "@octokit/oauth-methods";
import { request as octokitRequest } from "@octokit/request";
import { PAGE_HEADERS, renderMessagePage } from "./page-shell.js";
import type { Store } from "../store/store.js";
import type { RunPagesConfig } from "./run-pages-config.js";
import type { Viewer } from "./run-pages-host.js";
import type { SignedCookies } from "./signed-cookies.js";

const SESSION = "clustercode_session";
const OAUTH = "clustercode_oauth";
const SESSION_SECONDS = 8 * 3600;
const OAUTH_SECONDS = 600;
const MAX_FORM = 4096;
/** Where the pages' sign-out form posts. */
export const SIGN_OUT_PATH = "/auth/sign-out";

/** A session as a request shows it: its id (from the signed cookie) and who it is. */
interface Session {
  id: string;
  viewer: Viewer;
}

/**
 * Sign-in with GitHub through the app's own user authorization (web) flow: `/auth/sign-in`
 * sends the browser to GitHub with a nonce kept in a signed cookie, `/auth/callback` exchanges
 * the code for a user token (Octokit's OAuth methods), asks GitHub who that is (`GET /user`),
 * forgets the token, and starts a session: kept in the store (id, login, expiry), its random id
 * in a cookie signed with the session secret. `POST /auth/sign-out` (with the session's CSRF
 * token) deletes it from the store, so its cookie, even replayed, no longer signs anyone in.
 */
export class GitHubSignIn {
  readonly #request: typeof octokitRequest;

  constructor(
    private readonly config: RunPagesConfig,
    /** The cookies' signer, once the session secret is known. */
    private readonly cookies: () => Promise<SignedCookies>,
    private readonly sessions: Pick<Store, "putSession" | "getSession" | "deleteSession">,
    private readonly now: () => number,
  ) {
    const baseUrl =
      config.githubHost === "github.com"
        ? "https://api.github.com"
        : `https://${config.githubHost}/api/v3`;
    this.#request = octokitRequest.defaults({
      baseUrl,
      headers: { "user-agent": "clustercode-run-pages" },
    });
  }

  /** The signed-in person of a request, with the CSRF token of their session. */
  async viewer(req: IncomingMessage): Promise<Viewer | undefined> {
    return (await this.#session(req))?.viewer;
  }

  async #session(req: IncomingMessage): Promise<Session | undefined> {
    const cookies = await this.cookies();
    const { sid, exp } = cookies.get(req, SESSION) ?? {};
    if (typeof sid !== "string" || typeof exp !== "number" || exp <= this.now()) return undefined;
    const stored = await this.sessions.getSession(sid, this.now());
    if (stored === undefined) return undefined;
    return { id: sid, viewer: { login: stored.login, csrf: cookies.derive(`csrf:${sid}`) } };
  }

  /** Where a page sends someone who is not signed in. */
  signInPath(returnTo: string): string {
    return `/auth/sign-in?return=${encodeURIComponent(returnTo)}`;
  }

  /** Serves `/auth/sign-in` and `/auth/callback`; true when it handled the request. */
  async routes(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    const url = new URL(req.url ?? "/", "http://run-pages.invalid");
    if (req.method === "POST" && url.pathname === SIGN_OUT_PATH) {
      await this.#signOut(req, res);
      return true;
    }
    if (req.method !== "GET") return false;
    if (url.pathname === "/auth/sign-in") {
      await this.#start(res, url.searchParams.get("return") ?? "/runs");
      return true;
    }
    if (url.pathname === "/auth/callback") {
      await this.#finish(req, res, url.searchParams);
      return true;
    }
    return false;
  }

  /** Ends the request's session on the server, when the form carried its CSRF token. */
  async #signOut(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const session = await this.#session(req);
    const form = new URLSearchParams((await readForm(req)) ?? "");
    const token = form.get("csrf") ?? req.headers["x-clustercode-csrf"];
    const site = req.headers["sec-fetch-site"];
    if (
      session !== undefined &&
      (typeof token !== "string" ||
        !sameText(token, session.viewer.csrf) ||
        (site !== undefined && site !== "same-origin"))
    ) {
      res.writeHead(403, PAGE_HEADERS);
      res.end(
        renderMessagePage(
          "Not signed out",
          "This request did not come from a run page (missing or wrong CSRF token).",
          { href: "/runs", text: "Run pages" },
        ),
      );
      return;
    }
    if (session !== undefined) await this.sessions.deleteSession(session.id);
    res.writeHead(200, { ...PAGE_HEADERS, "set-cookie": (await this.cookies()).clear(SESSION) });
    res.end(
      renderMessagePage("Signed out", "You are signed out of the ClusterCode run pages.", {
        href: "/runs",
        text: "Sign in again",
      }),
    );
  }

  async #start(res: ServerResponse, requested: string): Promise<void> {
    // Only a page of ours is a place to come back to (no open redirect).
    const returnTo = /^\/runs(\/[A-Za-z0-9._/-]*)?$/.test(requested) ? requested : "/runs";
    const state = randomBytes(24).toString("base64url");
    const { url } = getWebFlowAuthorizationUrl({
      clientType: "github-app",
      clientId: this.config.clientId,
      redirectUrl: `${this.config.publicUrl}/auth/callback`,
      state,
      request: this.#request,
    });
    res.writeHead(302, {
      location: url,
      "set-cookie": (await this.cookies()).set(
        OAUTH,
        { state, returnTo, exp: this.now() + OAUTH_SECONDS * 1000 },
        { maxAgeSeconds: OAUTH_SECONDS, secure: this.#secure() },
      ),
      "cache-control": "no-store",
    });
    res.end();
  }

  async #finish(req: IncomingMessage, res: ServerResponse, query: URLSearchParams): Promise<void> {
    const pending = (await this.cookies()).get(req, OAUTH);
    const code = query.get("code");
    const fresh = typeof pending?.exp === "number" && pending.exp > this.now();
    if (
      code === null ||
      !fresh ||
      typeof pending.state !== "string" ||
      pending.state !== query.get("state")
    ) {
      this.#fail(
        res,
        400,
        "This sign-in link is stale or was not started here. Open the run page again to sign in.",
      );
      return;
    }
    let login: string;
    try {
      const { authentication } = await exchangeWebFlowCode({
        clientType: "github-app",
        clientId: this.config.clientId,
        clientSecret: this.config.clientSecret,
        code,
        redirectUrl: `${this.config.publicUrl}/auth/callback`,
        request: this.#request,
      });
      const { data } = await this.#request("GET /user", {
        headers: { authorization: `token ${authentication.token}` },
      });
      login = data.login;
    } catch {
      this.#fail(res, 502, "GitHub did not confirm the sign-in. Try again from the run page.");
      return;
    }
    const sid = randomBytes(32).toString("base64url");
    const exp = this.now() + SESSION_SECONDS * 1000;
    await this.sessions.putSession({ id: sid, login, expiresAt: exp });
    const cookies = await this.cookies();
    res.writeHead(302, {
      location: typeof pending.returnTo === "string" ? pending.returnTo : "/runs",
      "set-cookie": [
        cookies.set(
          SESSION,
          { sid, exp },
          {
            maxAgeSeconds: SESSION_SECONDS,
            secure: this.#secure(),
          },
        ),
        cookies.clear(OAUTH),
      ],
      "cache-control": "no-store",
    });
    res.end();
  }

  #fail(res: ServerResponse, status: number, message: string): void {
    res.writeHead(status, PAGE_HEADERS);
    res.end(renderMessagePage("Sign-in failed", message, { href: "/runs", text: "Run pages" }));
  }

  #secure(): boolean {
    return this.config.publicUrl.startsWith("https://");
  }
}

/** A small form body; undefined when it is larger than a sign-out form. */
async function readForm(req: IncomingMessage): Promise<string | undefined> {
  let body = "";
  for await (const chunk of req as AsyncIterable<Buffer>) {
    body += chunk.toString("utf8");
    if (body.length > MAX_FORM) return undefined;
  }
  return body;
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
