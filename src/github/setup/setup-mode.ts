import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Probot, Server } from "probot";
import type { Settings } from "../../settings/index.js";
import { webhookProxyUrlNow } from "../../settings/process-environment.js";
import { setupPageHandler } from "./setup-page.js";

/** What Probot's setup handler logs with. */
interface SetupLog {
  info(message: string): void;
  warn(message: string): void;
  error(message: unknown): void;
}

/**
 * Whether the app still has to be registered: no APP_ID yet (in the environment or `.env`),
 * outside production (where Probot refuses to start instead).
 */
export function needsSetup(settings: Settings): boolean {
  return settings.githubApp.appId === undefined && settings.githubApp.nodeEnv !== "production";
}

/**
 * Probot's setup server, with this app's own page on `GET /probot`: Probot's setup handler keeps
 * the rest (creating a smee.io channel when it can, turning GitHub's redirect into `.env`
 * credentials, importing an existing app). Probot does not export that handler, so it is loaded
 * from the installed package's files, beside its entry point.
 */
export async function startSetupServer(options: {
  cwd: string;
  settings: Settings;
  log?: SetupLog;
}): Promise<Server> {
  const { githubApp } = options.settings;
  // The proxy URL is read when the page is shown: Probot's setup may create a channel after start.
  const env = {
    get WEBHOOK_PROXY_URL() {
      return webhookProxyUrlNow();
    },
    GHE_HOST: githubApp.gheHost,
    GH_ORG: githubApp.ghOrg,
  };
  const log: SetupLog = options.log ?? {
    info: (message) => console.log(message),
    warn: (message) => console.warn(message),
    error: (message) => console.error(message),
  };
  const server = new Server({
    host: githubApp.host,
    port: githubApp.port,
    // Probot's own workaround (#1512): setup never uses the Probot instance.
    Probot: Probot.defaults({ appId: 1, privateKey: "dummy value for setup, see #1512" }),
  });
  const appYml = readFileSync(join(options.cwd, "app.yml"), "utf8");
  server.addHandler(setupPageHandler({ appYml, env }));
  const probotSetup = await loadProbotSetup();
  await server.loadHandlerFactory(probotSetup({ host: server.host, port: server.port, log }));
  await server.start();
  // Probot's setup may have made a smee.io channel; without one, say so where the user looks.
  if (webhookProxyUrlNow() === undefined) {
    log.warn(
      "WEBHOOK_PROXY_URL is not set: an app registered from this page gets webhooks only if GitHub can reach this server (see the README's webhook proxy section)",
    );
  }
  return server;
}

type SetupFactory = (
  options: Record<string, unknown>,
) => Parameters<Server["loadHandlerFactory"]>[0];

async function loadProbotSetup(): Promise<SetupFactory> {
  const entry = pathToFileURL(createRequire(import.meta.url).resolve("probot"));
  const module = (await import(new URL("apps/setup.js", entry).href)) as {
    setupAppFactory: SetupFactory;
  };
  return module.setupAppFactory;
}
