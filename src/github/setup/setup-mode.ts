import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { parseEnv } from "node:util";
import { Probot, Server } from "probot";
import { setupPageHandler } from "./setup-page.js";

/** What Probot's setup handler logs with. */
interface SetupLog {
  info(message: string): void;
  warn(message: string): void;
  error(message: unknown): void;
}

/**
 * Applies `.env` of `cwd` to `env` as Probot's `run` does, and tells whether the app still has
 * to be registered: no APP_ID yet, outside production (where Probot refuses to start instead).
 */
export function needsSetup(cwd: string, env: NodeJS.ProcessEnv): boolean {
  const file = join(cwd, ".env");
  if (existsSync(file)) Object.assign(env, parseEnv(readFileSync(file, "utf8")));
  return !env.APP_ID && env.NODE_ENV !== "production";
}

/**
 * Probot's setup server, with this app's own page on `GET /probot`: Probot's setup handler keeps
 * the rest (creating a smee.io channel when it can, turning GitHub's redirect into `.env`
 * credentials, importing an existing app). Probot does not export that handler, so it is loaded
 * from the installed package's files, beside its entry point.
 */
export async function startSetupServer(options: {
  cwd: string;
  env: NodeJS.ProcessEnv;
  log?: SetupLog;
}): Promise<Server> {
  const { env } = options;
  const log: SetupLog = options.log ?? {
    info: (message) => console.log(message),
    warn: (message) => console.warn(message),
    error: (message) => console.error(message),
  };
  const server = new Server({
    host: env.HOST || "localhost",
    port: Number(env.PORT || 3000),
    // Probot's own workaround (#1512): setup never uses the Probot instance.
    Probot: Probot.defaults({ appId: 1, privateKey: "dummy value for setup, see #1512" }),
  });
  const appYml = readFileSync(join(options.cwd, "app.yml"), "utf8");
  server.addHandler(setupPageHandler({ appYml, env }));
  const probotSetup = await loadProbotSetup();
  await server.loadHandlerFactory(probotSetup({ host: server.host, port: server.port, log }));
  await server.start();
  // Probot's setup may have made a smee.io channel; without one, say so where the user looks.
  if (!env.WEBHOOK_PROXY_URL) {
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
