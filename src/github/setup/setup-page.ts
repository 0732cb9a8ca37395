import type { IncomingMessage, ServerResponse } from "node:http";
import { isMap, isScalar, isSeq, parseDocument } from "yaml";

/** What `app.yml` says of the app, with the reason each permission and event is asked for. */
export interface AppDescription {
  /** The manifest as GitHub reads it (app.yml's keys). */
  manifest: Record<string, unknown>;
  /** `[name, access, why]` per permission, in app.yml's order. */
  permissions: [string, string, string][];
  /** `[event, why]` per webhook event. */
  events: [string, string][];
}

/** Reads `app.yml`: its keys, and the trailing comments that say why each grant is needed. */
export function describeApp(appYml: string): AppDescription {
  const document = parseDocument(appYml);
  const manifest = (document.toJS() ?? {}) as Record<string, unknown>;
  const permissions: AppDescription["permissions"] = [];
  const granted = document.get("default_permissions");
  for (const pair of isMap(granted) ? granted.items : []) {
    const value = isScalar(pair.value) ? pair.value : undefined;
    const key = isScalar(pair.key) ? String(pair.key.value) : "";
    permissions.push([key, text(value?.value), (value?.comment ?? "").trim()]);
  }
  const events: AppDescription["events"] = [];
  const listed = document.get("default_events");
  for (const item of isSeq(listed) ? listed.items : []) {
    if (isScalar(item)) events.push([String(item.value), (item.comment ?? "").trim()]);
  }
  return { manifest, permissions, events };
}

/**
 * The manifest the setup page posts to GitHub, built as Probot's own setup does: app.yml's keys
 * over defaults, the webhook URL being WEBHOOK_PROXY_URL when set and this server otherwise.
 */
export function appManifest(
  app: AppDescription,
  baseUrl: string,
  env: NodeJS.ProcessEnv,
): Record<string, unknown> {
  return {
    hook_attributes: { url: webhookUrl(baseUrl, env) },
    public: false,
    redirect_url: `${baseUrl}/probot/setup`,
    version: "v1",
    ...app.manifest,
  };
}

/** Where GitHub will deliver webhooks: the proxy channel when there is one. */
export function webhookUrl(baseUrl: string, env: NodeJS.ProcessEnv): string {
  return env.WEBHOOK_PROXY_URL || `${baseUrl}/`;
}

/** Whether GitHub, from the internet, cannot reach `url` (a loopback or unqualified host). */
export function isUnreachable(url: string): boolean {
  const host = new URL(url).hostname;
  return /^(localhost|127\.\d+\.\d+\.\d+|\[::1\]|0\.0\.0\.0)$/.test(host) || !host.includes(".");
}

/**
 * A handler for Probot's setup server answering `GET /probot` with this app's setup page (what
 * it is, what it will ask for, where its webhooks will go); every other route is left to Probot's
 * setup (the manifest's redirect, importing an existing app).
 */
export function setupPageHandler(options: { appYml: string; env: NodeJS.ProcessEnv }) {
  const app = describeApp(options.appYml);
  return (request: IncomingMessage, response: ServerResponse): boolean => {
    const path = (request.url ?? "").split("?")[0];
    if (request.method !== "GET" || path !== "/probot") return false;
    const html = renderSetupPage(app, baseUrlOf(request), options.env);
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(html);
    return true;
  };
}

/** The setup page. */
export function renderSetupPage(
  app: AppDescription,
  baseUrl: string,
  env: NodeJS.ProcessEnv,
): string {
  const manifest = appManifest(app, baseUrl, env);
  const name = text(manifest.name) || "ClusterCode Workflows";
  const hook = webhookUrl(baseUrl, env);
  const createUrl = `https://${env.GHE_HOST || "github.com"}${env.GH_ORG ? `/organizations/${env.GH_ORG}` : ""}/settings/apps/new`;
  const rows = (cells: string[][]) =>
    cells
      .map((row) => `<tr>${row.map((cell) => `<td>${escape(cell)}</td>`).join("")}</tr>`)
      .join("\n");
  const delivery = env.WEBHOOK_PROXY_URL
    ? `<p>GitHub will deliver webhooks to the proxy channel <code>${escape(hook)}</code>; once the app is registered and this server restarted, Probot forwards each one here.</p>`
    : isUnreachable(hook)
      ? `<p class="warning"><strong>GitHub cannot reach <code>${escape(hook)}</code>.</strong> An app registered now would get no webhooks. For development, create a channel at <a href="https://smee.io/new">smee.io</a>, put <code>WEBHOOK_PROXY_URL=&lt;channel URL&gt;</code> in <code>.env</code> and restart <code>npm start</code>; in production, serve this app on a public HTTPS address and open this page there.</p>`
      : `<p>GitHub will deliver webhooks to <code>${escape(hook)}</code>.</p>`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Set up ${escape(name)}</title>
<style>
body { font: 15px/1.5 system-ui, sans-serif; max-width: 46rem; margin: 2rem auto; padding: 0 1rem; }
table { border-collapse: collapse; } td { padding: .15rem .8rem .15rem 0; vertical-align: top; }
.warning { background: #fff5d6; border: 1px solid #d4a72c; padding: .6rem .8rem; }
code { background: #f3f3f3; padding: 0 .2rem; }
</style>
</head>
<body>
<h1>Set up ${escape(name)}</h1>
<p>${escape(text(manifest.description))}</p>
<p>This server has no GitHub App credentials yet. Registering creates a private GitHub App from this project's <code>app.yml</code>; GitHub then sends you back here and its id, private key and webhook secret are written to <code>.env</code>. Restart <code>npm start</code> afterwards and install the app on the repositories that hold <code>.clustercode/workflow.yml</code>.</p>
<h2>Where webhooks go</h2>
${delivery}
<h2>What it will ask for</h2>
<table>
${rows(app.permissions.map(([permission, access, why]) => [permission, access, why]))}
</table>
<h2>Events it subscribes to</h2>
<table>
${rows(app.events)}
</table>
<form action="${escape(createUrl)}" method="post">
<p><button name="manifest" value="${escape(JSON.stringify(manifest))}">Register the GitHub App</button>
or <a href="/probot/import">use an existing GitHub App</a></p>
</form>
</body>
</html>
`;
}

/** The address the browser used for this server, as Probot's setup computes it. */
function baseUrlOf(request: IncomingMessage): string {
  const forwarded = request.headers["x-forwarded-proto"];
  const encrypted = (request.socket as { encrypted?: boolean }).encrypted === true;
  const protocol = forwarded !== undefined || encrypted ? "https" : "http";
  const host = request.headers["x-forwarded-host"] ?? request.headers.host ?? "localhost";
  return `${protocol}://${Array.isArray(host) ? host[0] : host}`;
}

/** A scalar of app.yml as text; anything else as nothing. */
function text(value: unknown): string {
  return typeof value === "string" || typeof value === "number" || typeof value === "boolean"
    ? String(value)
    : "";
}

function escape(value: string): string {
  return value
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&#39;");
}
