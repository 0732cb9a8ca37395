import { randomUUID } from "node:crypto";
import { resolve } from "node:path";
import { ProbotOctokit, run } from "probot";
import { clusterCodeApp } from "./intake/app.js";
import { AppHost } from "./setup/app-host.js";
import { InstallationPacing, pacedOctokit } from "./client/pacing.js";
import { needsSetup, startSetupServer } from "./setup/setup-mode.js";
import type { Settings } from "../settings/index.js";
import {
  applyDotEnv,
  inheritedEnvironment,
  settingsAtStart,
} from "../settings/process-environment.js";

/**
 * `npm start`: without APP_ID (in the environment or `.env`), the setup page registers the app
 * from `app.yml`, with webhooks to WEBHOOK_PROXY_URL when set; with APP_ID and PRIVATE_KEY (and
 * WEBHOOK_SECRET, optional GHE_HOST) it serves webhooks on the embedded store in
 * CLUSTERCODE_STATE_DIR (default `.clustercode-state`) with local DevBoxes.
 */
applyDotEnv(process.cwd());
const settings = settingsAtStart("clustercode app", 1);
const server = needsSetup(settings)
  ? await startSetupServer({ cwd: process.cwd(), settings })
  : await serveApp(settings);

function serveApp(settings: Settings) {
  const { githubApp } = settings;
  const webhooks = {
    path: githubApp.webhookPath,
    maxBytes: githubApp.maxWebhookBytes,
    secret: githubApp.webhookSecret,
  };
  // Probot's server puts its own webhook middleware, unbounded, first on its path: that path is
  // moved out of reach, and the app serves the public one behind its guard. Probot reads its own
  // variables from the environment it is given.
  const internalPath = `/internal/webhooks/${randomUUID()}`;
  const env = { ...inheritedEnvironment(), WEBHOOK_PATH: internalPath };
  return run(
    async (app, options) => {
      const host = await AppHost.open({
        stateDir: resolve(settings.store.stateDir ?? ".clustercode-state"),
        env: inheritedEnvironment(),
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
    {
      env,
      Octokit: pacedOctokit(
        ProbotOctokit,
        new InstallationPacing({
          writeGapMs: githubApp.writeGapMs,
          notificationGapMs: githubApp.notificationGapMs,
        }),
      ),
    },
  );
}
void server;
