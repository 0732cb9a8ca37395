import type { IncomingMessage, ServerResponse } from "node:http";
import type { ApplicationFunction } from "probot";
import type { AppHost } from "../setup/app-host.js";
import { InstallationClients } from "../client/installation-clients.js";
import { recordedPayload, wantsDelivery } from "./router.js";
import { guardWebhooks, type WebhookGuardOptions } from "./webhook-guard.js";

/** `GET /healthz`: 200 while the process serves (the container's health check). */
export function healthz(req: IncomingMessage, res: ServerResponse): boolean {
  if (req.method !== "GET" || req.url?.split("?")[0] !== "/healthz") return false;
  res.writeHead(200, { "content-type": "text/plain" });
  res.end("ok\n");
  return true;
}

/**
 * The Probot app: every verified delivery that could make the app do anything is recorded in
 * the store before Probot acknowledges it, and processed from there (see DeliveryIntake);
 * nothing else happens in the handler. With `webhooks`, the app serves that webhook path
 * itself, bounded in size and verified before Probot reads it (see guardWebhooks). The run
 * pages, when configured, share its HTTP server.
 */
export function clusterCodeApp(
  host: AppHost,
  webhooks?: Omit<WebhookGuardOptions, "next">,
): ApplicationFunction {
  return async (app, { addHandler }) => {
    host.useAuth(
      new InstallationClients({ installation: (id) => app.auth(id), app: () => app.auth() }),
    );
    addHandler(healthz);
    if (host.runPages !== undefined) addHandler(host.runPages);
    if (webhooks !== undefined) {
      // The guard serves the public webhook path with Probot's middleware behind it.
      const next = await app.getNodeMiddleware({ path: webhooks.path });
      addHandler(guardWebhooks({ ...webhooks, next }));
    }
    app.onAny(async (context) => {
      const { id, name, payload } = context;
      const received = performance.now();
      const wanted = wantsDelivery(name, payload);
      if (wanted) await host.intake.record(id, name, recordedPayload(name, payload));
      host.telemetry.webhook(id, name, performance.now() - received, wanted);
    });
  };
}
