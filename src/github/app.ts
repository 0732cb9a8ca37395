import type { IncomingMessage, ServerResponse } from "node:http";
import type { ApplicationFunction } from "probot";
import type { AppHost } from "./app-host.js";
import { recordedPayload, wantsDelivery } from "./router.js";

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
 * nothing else happens in the handler. The run pages, when configured, share its HTTP server.
 */
export function clusterCodeApp(host: AppHost): ApplicationFunction {
  return (app, { addHandler }) => {
    host.useAuth({ installation: (id) => app.auth(id), app: () => app.auth() });
    addHandler(healthz);
    if (host.runPages !== undefined) addHandler(host.runPages);
    app.onAny(async (context) => {
      const { id, name, payload } = context;
      if (wantsDelivery(name, payload))
        await host.intake.record(id, name, recordedPayload(name, payload));
    });
  };
}
