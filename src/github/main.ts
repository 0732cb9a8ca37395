import { resolve } from "node:path";
import { run } from "probot";
import { clusterCodeApp } from "./app.js";
import { AppHost } from "./app-host.js";
import { needsSetup, startSetupServer } from "./setup-mode.js";

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
  return run(async (app, options) => {
    const host = await AppHost.open({
      stateDir: resolve(process.env.CLUSTERCODE_STATE_DIR ?? ".clustercode-state"),
      env: process.env,
      log: { error: (message, error) => app.log.error({ err: error }, message) },
    });
    await clusterCodeApp(host)(app, options);
    await host.recover();
    host.start();
    // In the background: the app serves webhooks while it reads every repository's schedules.
    const onError = (error: unknown) => app.log.error({ err: error }, "registering schedules");
    void host.registerSchedules(onError).catch(onError);
    process.once("SIGTERM", () => {
      void host.close().then(
        () => process.exit(0),
        (error: unknown) => {
          app.log.error({ err: error }, "closing");
          process.exit(1);
        },
      );
    });
  });
}
void server;
