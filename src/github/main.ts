import { randomUUID } from "node:crypto";
import { resolve } from "node:path";
import { ProbotOctokit, run } from "probot";
import { clusterCodeApp } from "./intake/app.js";
import { AppHost } from "./setup/app-host.js";
import { InstallationPacing, pacedOctokit, type PaceOptions } from "./client/pacing.js";
import { needsSetup, startSetupServer } from "./setup/setup-mode.js";
import { DEFAULT_MAX_WEBHOOK_BYTES } from "./intake/webhook-guard.js";

/**
 * `npm start`: without APP_ID (in the environment or `.env`), the setup page registers the app
 * from `app.yml`, with webhooks to WEBHOOK_PROXY_URL when set; with APP_ID and PRIVATE_KEY (and
 * WEBHOOK_SECRET, optional GHE_HOST) it serves webhooks on the embedded store in
 * CLUSTERCODE_STATE_DIR (default `.clustercode-state`) with local DevBoxes.
 */
const server = needsSetup(process.cwd(), process.env)
  ? await startSetupServer({ cwd: process.cwd(), env: process.env })
  : await serveApp();

function serveApp() {
  // Getters: read when the app loads, after Probot loads `.env`.
  const webhooks = {
    get path() {
      return process.env.WEBHOOK_PATH ?? "/api/github/webhooks";
    },
    get maxBytes() {
      return Number(process.env.CLUSTERCODE_MAX_WEBHOOK_BYTES ?? DEFAULT_MAX_WEBHOOK_BYTES);
    },
    // Probot's own default.
    get secret() {
      return process.env.WEBHOOK_SECRET ?? "development";
    },
  };
  // Probot's server puts its own webhook middleware, unbounded, first on its path: that path is
  // moved out of reach, and the app serves the public one behind its guard. The environment is
  // read lazily, after Probot loads `.env`.
  const internalPath = `/internal/webhooks/${randomUUID()}`;
  const env = new Proxy(process.env, {
    get: (target, key) => (key === "WEBHOOK_PATH" ? internalPath : target[key as string]),
  });
  return run(
    async (app, options) => {
      const host = await AppHost.open({
        stateDir: resolve(process.env.CLUSTERCODE_STATE_DIR ?? ".clustercode-state"),
        env: process.env,
        log: { error: (message, error) => app.log.error({ err: error }, message) },
      });
      await clusterCodeApp(host, webhooks)(app, options);
      // In the background, so that the server (and its health check) answers at once after a
      // restart however many runs are parked; the periodic parts start once recovery is done.
      const onRecoveryError = (error: unknown) => app.log.error({ err: error }, "recovering runs");
      const recovered = host
        .recover()
        .catch(onRecoveryError)
        .finally(() => host.start());
      // In the background: the app serves webhooks while it reads every repository's schedules.
      const onError = (error: unknown) => app.log.error({ err: error }, "registering schedules");
      void host.registerSchedules(onError).catch(onError);
      // A stop during recovery lets it finish first: what it completes is not cut off halfway.
      process.once("SIGTERM", () => {
        void recovered
          .then(() => host.close())
          .then(
            () => process.exit(0),
            (error: unknown) => {
              app.log.error({ err: error }, "closing");
              process.exit(1);
            },
          );
      });
    },
    // Each installation's requests keep GitHub's pace apart from the others' (see pacedOctokit).
    { env, Octokit: pacedOctokit(ProbotOctokit, new InstallationPacing(paceFromEnv(process.env))) },
  );
}
void server;

/**
 * GitHub's pace, by default plugin-throttling's; CLUSTERCODE_GITHUB_WRITE_GAP_MS and
 * CLUSTERCODE_GITHUB_NOTIFICATION_GAP_MS change it (a GitHub Enterprise Server with other
 * limits, or a benchmark against a loopback GitHub).
 */
function paceFromEnv(env: NodeJS.ProcessEnv): PaceOptions {
  const gap = (name: string) => {
    const value = Number(env[name] ?? "");
    return env[name] === undefined || !Number.isFinite(value) || value < 0 ? undefined : value;
  };
  const write = gap("CLUSTERCODE_GITHUB_WRITE_GAP_MS");
  const notification = gap("CLUSTERCODE_GITHUB_NOTIFICATION_GAP_MS");
  return {
    ...(write === undefined ? {} : { writeGapMs: write }),
    ...(notification === undefined ? {} : { notificationGapMs: notification }),
  };
}
