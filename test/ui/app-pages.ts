import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import nock from "nock";
import { startTestApp, type TestApp } from "../github/helpers/harness.js";
import { labeledIssue } from "../helpers/payloads.js";

/** The app's OAuth client in the tests (never a real one). */
export const CLIENT_ID = "Iv1.testclientid";
export const CLIENT_SECRET = "test-client-secret-never-shown";

/** A build, then an approval anyone with write access may give. */
export const GATED = `version: 1
name: ship
on:
  label: clustercode
nodes:
  build:
    kind: run
    run: echo '<script>window.pwned = 1</script>' && date > built.txt
  gate:
    kind: approval
    message: Ship it?
edges:
  - { from: build, to: gate }
  - { from: gate, to: done, label: approved }
  - { from: gate, to: failed, label: rejected }
`;

/** The labelled-issue delivery that starts a run of GATED. */
export const labeled = () => labeledIssue(9);

type Handler = (req: IncomingMessage, res: ServerResponse) => unknown;

/** The test app serving its HTTP handlers (the run pages) on 127.0.0.1, as Probot's server does. */
export interface PagesApp {
  app: TestApp;
  /** `http://127.0.0.1:<port>`, which is also the app's CLUSTERCODE_PUBLIC_URL. */
  base: string;
  /** The OAuth codes GitHub would hand out, by login: `code-for-<login>`. */
  codeFor(login: string): string;
  close(): Promise<void>;
}

/**
 * Starts the app with run pages configured, a server on a free port of 127.0.0.1 running the
 * handlers the app added, and GitHub's OAuth token exchange nocked (each code gives a user
 * token that the fake `GET /user` knows).
 */
export async function startPagesApp(workflow: string): Promise<PagesApp> {
  const handlers: Handler[] = [];
  const server: Server = createServer((req, res) => {
    void (async () => {
      for (const handler of handlers) if ((await handler(req, res)) === true) return;
      res.writeHead(404).end();
    })().catch(() => res.writeHead(500).end());
  });
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", () => listening()));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const app = await startTestApp(workflow, {
    env: {
      CLUSTERCODE_PUBLIC_URL: base,
      GITHUB_CLIENT_ID: CLIENT_ID,
      GITHUB_CLIENT_SECRET: CLIENT_SECRET,
      WEBHOOK_SECRET: "test-webhook-secret",
    },
    addHandler: (handler) => handlers.push(handler),
  });
  nock("https://github.com")
    .persist()
    .post("/login/oauth/access_token")
    .reply((_uri, body) => {
      const { code, client_id, client_secret } = body as Record<string, string>;
      const login = /^code-for-(.+)$/.exec(code ?? "")?.[1];
      if (client_id !== CLIENT_ID || client_secret !== CLIENT_SECRET || login === undefined)
        return [200, { error: "bad_verification_code" }];
      app.github.userTokens.set(`ghu_${login}`, login);
      return [200, { access_token: `ghu_${login}`, token_type: "bearer", scope: "" }];
    });
  return {
    app,
    base,
    codeFor: (login) => `code-for-${login}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((closed) => server.close(() => closed()));
      await app.close();
    },
  };
}

/** Cookies a response set, as a `Cookie` header value (name=value pairs). */
export function cookiesOf(response: Response, jar = ""): string {
  const set = response.headers.getSetCookie().map((cookie) => cookie.split(";")[0] ?? "");
  const kept = jar
    .split("; ")
    .filter(
      (pair) => pair !== "" && !set.some((cookie) => cookie.split("=")[0] === pair.split("=")[0]),
    );
  return [...kept, ...set.filter((cookie) => !cookie.endsWith("="))].join("; ");
}

/** Signs `login` in without a browser (sign-in, GitHub's redirect back, callback): the cookie jar. */
export async function signIn(pages: PagesApp, login: string, returnTo: string): Promise<string> {
  const start = await fetch(`${pages.base}/auth/sign-in?return=${encodeURIComponent(returnTo)}`, {
    redirect: "manual",
  });
  const authorize = new URL(start.headers.get("location") ?? "");
  const state = authorize.searchParams.get("state") ?? "";
  const jar = cookiesOf(start);
  const callback = await fetch(
    `${pages.base}/auth/callback?code=${pages.codeFor(login)}&state=${state}`,
    { redirect: "manual", headers: { cookie: jar } },
  );
  if (callback.status !== 302) throw new Error(`sign-in of ${login}: ${callback.status}`);
  return cookiesOf(callback, jar);
}
