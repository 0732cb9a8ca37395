import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { inspect } from "node:util";
import { sign } from "@octokit/webhooks-methods";
import { Probot } from "probot";
import { afterEach, describe, expect, it } from "vitest";
import { clusterCodeApp } from "../../src/github/intake/app.js";
import type { AppHost } from "../../src/github/setup/app-host.js";
import { DeliveryIntake } from "../../src/github/intake/intake.js";
import { guardWebhooks } from "../../src/github/intake/webhook-guard.js";
import { StoreError } from "../../src/store/store-error.js";
import type { Store } from "../../src/store/store.js";
import { webhookExample } from "./helpers/examples.js";

const SECRET = "webhook-secret";
const servers: Server[] = [];
afterEach(() => servers.splice(0).forEach((server) => server.close()));

const PATH = "/api/github/webhooks";
const MAX_BYTES = 1024 * 1024;

/** A logger that keeps everything it is given, as Probot's would write it. */
function recordingLog(logged: unknown[]): never {
  const log: object = new Proxy(
    {},
    {
      get: (_target, key) =>
        key === "child" ? () => log : (...args: unknown[]) => void logged.push(args),
    },
  );
  return log as never;
}

/**
 * Serves the app's webhooks over HTTP, as Probot does behind the app's guard, with `store`
 * behind the intake; everything Probot logs lands in `logged`.
 */
async function serve(
  store: Partial<Store>,
  logged: unknown[],
  errors: unknown[] = [],
  options: { ackDeadlineMs?: number; handled?: string[] } = {},
): Promise<string> {
  const intake = new DeliveryIntake({
    store: store as Store,
    handle: (delivery) => {
      options.handled?.push(delivery.deliveryId);
      return Promise.resolve();
    },
    now: () => 0,
    holder: "here",
    onError: (error) => errors.push(error),
    ...(options.ackDeadlineMs === undefined ? {} : { ackDeadlineMs: options.ackDeadlineMs }),
  });
  const host = { useAuth: () => undefined, intake } as unknown as AppHost;
  const log = recordingLog(logged);
  const probot = new Probot({ appId: 1, privateKey: "unused", secret: SECRET, log });
  await probot.load((app, options) =>
    clusterCodeApp(host)(app, { ...options, addHandler: () => undefined }),
  );
  const middleware = await probot.getNodeMiddleware({ log });
  const guard = guardWebhooks({
    path: PATH,
    maxBytes: MAX_BYTES,
    secret: SECRET,
    next: middleware,
  });
  const server = createServer((req, res) => void guard(req, res));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}${PATH}`;
}

/** Streams `megabytes` MB to `url` in chunks; resolves with the answer's status. */
function postChunked(url: string, megabytes: number, declared?: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-github-event": "issue_comment",
        "x-github-delivery": "big",
        "x-hub-signature-256": "sha256=00",
        ...(declared === undefined ? {} : { "content-length": declared }),
      },
    });
    req.on("response", (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    // The app closes the connection after its 413: writing the rest then fails.
    req.on("error", (error) => setTimeout(() => reject(error), 200));
    // One megabyte sent over and over: the client holds no more than that.
    const chunk = Buffer.alloc(1024 * 1024, 0x20);
    let left = megabytes;
    const next = () => {
      while (left-- > 0) if (!req.write(chunk)) return void req.once("drain", next);
      req.end();
    };
    next();
  });
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
      recordDeliveries: () =>
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

  it("answers 5xx, never an acknowledgement, when the store records slower than the deadline", async () => {
    const errors: unknown[] = [];
    const handled: string[] = [];
    let land: (recorded: boolean) => void = () => undefined;
    const slow = {
      recordDeliveries: () => new Promise<boolean[]>((resolve) => (land = (r) => resolve([r]))),
      claimDelivery: () => Promise.resolve(true),
      markDeliveriesProcessed: () => Promise.resolve(),
    };
    const url = await serve(slow, [], errors, { ackDeadlineMs: 200, handled });
    const response = await post(url, JSON.stringify(approval()));
    expect(response.status).toBeGreaterThanOrEqual(500);
    expect(await response.text()).toContain("the delivery could not be recorded");
    expect(handled).toEqual([]);
    // The write lands after all: the delivery is handled, once.
    land(true);
    for (let i = 0; i < 100 && handled.length === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(handled).toHaveLength(1);
    expect(errors.map((error) => (error as Error).message)).toEqual([
      "the store did not record the delivery in time",
    ]);
  });

  it("answers 413 to a declared length over the limit, reading nothing", async () => {
    const recorded: unknown[] = [];
    const url = await serve(
      { recordDeliveries: (d) => (recorded.push(...d), Promise.resolve(d.map(() => true))) },
      [],
    );
    expect(await postChunked(url, 0, 25 * 1024 * 1024).catch(() => 0)).toBe(413);
    expect(recorded).toEqual([]);
  });

  it("answers 413 to a streamed body once it passes the limit, without holding it", async () => {
    const recorded: unknown[] = [];
    const url = await serve(
      { recordDeliveries: (d) => (recorded.push(...d), Promise.resolve(d.map(() => true))) },
      [],
    );
    const before = process.memoryUsage().arrayBuffers;
    expect(await postChunked(url, 25)).toBe(413);
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(20 * 1024 * 1024);
    expect(recorded).toEqual([]);
  });

  it("answers 400 to a bad signature and never logs the payload", async () => {
    const logged: unknown[] = [];
    const url = await serve(
      { recordDeliveries: (d) => Promise.resolve(d.map(() => true)) },
      logged,
    );
    const payload = { ...approval(), secret_marker: "do-not-log-4f1c" };
    const response = await post(url, JSON.stringify(payload), "sha256=" + "0".repeat(64));
    expect(response.status).toBe(400);
    expect(inspect(logged, { depth: 20, maxStringLength: Infinity })).not.toContain(
      "do-not-log-4f1c",
    );
  });
});
