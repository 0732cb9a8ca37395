import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { sign } from "@octokit/webhooks-methods";
import { Probot } from "probot";
import { afterEach, describe, expect, it } from "vitest";
import { clusterCodeApp } from "../../src/github/app.js";
import type { AppHost } from "../../src/github/app-host.js";
import { DeliveryIntake } from "../../src/github/intake.js";
import { StoreError } from "../../src/store/store-error.js";
import type { Store } from "../../src/store/store.js";
import { webhookExample } from "./helpers/examples.js";

const SECRET = "webhook-secret";
const servers: Server[] = [];
afterEach(() => servers.splice(0).forEach((server) => server.close()));

/** Serves the app's webhooks over HTTP, as Probot does, with `store` behind the intake. */
async function serve(
  store: Partial<Store>,
  logged: unknown[],
  errors: unknown[] = [],
): Promise<string> {
  const intake = new DeliveryIntake({
    store: store as Store,
    handle: () => Promise.resolve(),
    now: () => 0,
    holder: "here",
    onError: (error) => errors.push(error),
  });
  const host = { useAuth: () => undefined, intake } as unknown as AppHost;
  const probot = new Probot({ appId: 1, privateKey: "unused", secret: SECRET, logLevel: "fatal" });
  await probot.load((app, options) =>
    clusterCodeApp(host)(app, { ...options, addHandler: () => undefined }),
  );
  const middleware = await probot.getNodeMiddleware({
    log: { error: (...args: unknown[]) => logged.push(args), debug: () => undefined } as never,
  });
  const server = createServer((req, res) => void middleware(req, res));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/github/webhooks`;
}

async function post(url: string, body: string, signature?: string): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-github-event": "issue_comment",
      "x-github-delivery": "d1",
      "x-hub-signature-256": signature ?? (await sign(SECRET, body)),
    },
    body,
  });
}

/** A comment that approves: a delivery the app records. */
function approval(): object {
  const payload = webhookExample<{
    installation?: object;
    comment: { body: string };
    sender: { type: string };
  }>("issue_comment", "created");
  payload.installation = { id: 1 };
  payload.comment.body = "/approve";
  payload.sender.type = "User";
  return payload;
}

describe("webhook requests", () => {
  it("answers a delivery the store refused with a 5xx in generic words", async () => {
    const failing = {
      recordDelivery: () =>
        Promise.reject(
          new StoreError("unavailable", "Item size has exceeded the maximum allowed size"),
        ),
    };
    const errors: unknown[] = [];
    const url = await serve(failing, [], errors);
    const response = await post(url, JSON.stringify(approval()));
    expect(response.status).toBeGreaterThanOrEqual(500);
    const text = await response.text();
    expect(text).not.toContain("Item size");
    expect(text).toContain("the delivery could not be recorded");
    // The detail is logged inside the app.
    expect(errors.map((error) => (error as Error).message)).toEqual([
      "Item size has exceeded the maximum allowed size",
    ]);
  });
});
