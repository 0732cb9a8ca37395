import { createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";

/** Largest webhook body read by default: GitHub caps deliveries at 25 MB; ours are far smaller. */
export const DEFAULT_MAX_WEBHOOK_BYTES = 5 * 1024 * 1024;

/** An HTTP handler as Probot's server chains them: true when it answered the request. */
export type HttpHandler = (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;

/** What {@link guardWebhooks} checks and where it hands a delivery that passed. */
export interface WebhookGuardOptions {
  /** The webhook path GitHub posts to. */
  path: string;
  /** Bodies over this many bytes are answered 413, the rest left unread. */
  maxBytes: number;
  /** The webhook secret: a body whose signature does not match goes no further. */
  secret: string;
  /** Probot's webhook middleware, which reads `req.body` when it is set. */
  next: (req: IncomingMessage, res: ServerResponse) => Promise<boolean> | boolean;
}

/** How long the rest of an oversized body is dropped before its connection is closed. */
const DRAIN_MS = 2000;

/**
 * Stands in front of Probot's webhook middleware, which reads a body whole and logs a failed
 * signature check with the payload: a declared `content-length` over `maxBytes` is answered 413
 * before anything is read, a body growing past it while streaming is answered 413 (the rest
 * dropped unread for a moment, then the connection closed), and a body whose signature does not match is answered 400 here, so its
 * payload is never parsed or logged. A body that passes is handed on as `req.body`.
 */
export function guardWebhooks(options: WebhookGuardOptions): HttpHandler {
  return async (req, res) => {
    if (req.method !== "POST" || req.url?.split("?")[0] !== options.path) return false;
    if (Number(req.headers["content-length"] ?? 0) > options.maxBytes) {
      return answer(req, res, 413, `payload larger than ${options.maxBytes} bytes`);
    }
    const body = await readBounded(req, options.maxBytes);
    if (body === undefined) {
      return answer(req, res, 413, `payload larger than ${options.maxBytes} bytes`);
    }
    const signature = req.headers["x-hub-signature-256"];
    if (typeof signature !== "string" || !signed(options.secret, body, signature)) {
      return answer(req, res, 400, "signature does not match event payload and secret");
    }
    // Decoded as @octokit/webhooks decodes a streamed body.
    (req as IncomingMessage & { body?: string }).body = new TextDecoder("utf-8").decode(body);
    return options.next(req, res);
  };
}

/** The body, or undefined (and the rest left unread) once it passes `maxBytes`. */
function readBounded(req: IncomingMessage, maxBytes: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) return void chunks.push(chunk);
      req.off("data", onData);
      req.pause();
      chunks.length = 0;
      resolve(undefined);
    };
    req.on("data", onData);
    req.on("end", () => resolve(size > maxBytes ? undefined : Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

function signed(secret: string, body: Buffer, signature: string): boolean {
  const expected = Buffer.from(`sha256=${createHmac("sha256", secret).update(body).digest("hex")}`);
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function answer(req: IncomingMessage, res: ServerResponse, status: number, error: string): true {
  const body = JSON.stringify({ error });
  res.writeHead(status, { "content-type": "application/json" });
  res.end(body);
  if (status === 413) {
    // The rest of the body is dropped as it comes, holding none of it, for a moment, so that the
    // sender reads the 413 instead of a reset connection; then the socket is closed.
    req.resume();
    setTimeout(() => req.socket.destroy(), DRAIN_MS).unref();
  }
  return true;
}
