import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { exchangeWebFlowCode, getWebFlowAuthorizationUrl } from "@octokit/oauth-methods";
import { request as octokitRequest } from "@octokit/request";
import { PAGE_HEADERS, renderMessagePage } from "./page-shell.js";
import type { RunPagesConfig } from "./run-pages-config.js";
import type { Viewer } from "./run-pages-host.js";
import type { SignedCookies } from "./signed-cookies.js";

const SESSION = "clustercode_session";
const OAUTH = "clustercode_oauth";
const SESSION_SECONDS = 8 * 3600;
const OAUTH_SECONDS = 600;

/**
 * Sign-in with GitHub through the app's own user authorization (web) flow: `/auth/sign-in`
 * sends the browser to GitHub with a nonce kept in a signed cookie, `/auth/callback` exchanges
 * the code for a user token (Octokit's OAuth methods), asks GitHub who that is (`GET /user`),
 * forgets the token, and keeps only the login in a signed session cookie.
 */
export class GitHubSignIn {
  readonly #request: typeof octokitRequest;

  constructor(
    private readonly config: RunPagesConfig,
    private readonly cookies: SignedCookies,
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
  viewer(req: IncomingMessage): Viewer | undefined {
    const session = this.cookies.get(req, SESSION);
    const { login, iat, exp } = session ?? {};
    if (typeof login !== "string" || typeof iat !== "number" || typeof exp !== "number")
      return undefined;
    if (exp <= this.now()) return undefined;
    return { login, csrf: this.cookies.derive(`csrf:${login}:${iat}`) };
  }

  /** Where a page sends someone who is not signed in. */
  signInPath(returnTo: string): string {
    return `/auth/sign-in?return=${encodeURIComponent(returnTo)}`;
  }

  /** Serves `/auth/sign-in` and `/auth/callback`; true when it handled the request. */
  async routes(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    const url = new URL(req.url ?? "/", "http://run-pages.invalid");
    if (req.method !== "GET") return false;
    if (url.pathname === "/auth/sign-in") {
      this.#start(res, url.searchParams.get("return") ?? "/runs");
      return true;
    }
    if (url.pathname === "/auth/callback") {
      await this.#finish(req, res, url.searchParams);
      return true;
    }
    return false;
  }

  #start(res: ServerResponse, requested: string): void {
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
      "set-cookie": this.cookies.set(
        OAUTH,
        { state, returnTo, exp: this.now() + OAUTH_SECONDS * 1000 },
        { maxAgeSeconds: OAUTH_SECONDS, secure: this.#secure() },
      ),
      "cache-control": "no-store",
    });
    res.end();
  }

  async #finish(req: IncomingMessage, res: ServerResponse, query: URLSearchParams): Promise<void> {
    const pending = this.cookies.get(req, OAUTH);
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
    const iat = this.now();
    res.writeHead(302, {
      location: typeof pending.returnTo === "string" ? pending.returnTo : "/runs",
      "set-cookie": [
        this.cookies.set(
          SESSION,
          { login, iat, exp: iat + SESSION_SECONDS * 1000 },
          {
            maxAgeSeconds: SESSION_SECONDS,
            secure: this.#secure(),
          },
        ),
        this.cookies.clear(OAUTH),
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
