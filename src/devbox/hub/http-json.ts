import type { IncomingMessage } from "node:http";

/** A request body read as JSON, or the HTTP error to answer with. */
export type JsonBody =
  { ok: true; value: unknown } | { ok: false; status: 400 | 413; message: string };

/**
 * Reads `request`'s body as JSON, refusing more than `limit` bytes. An empty body reads as `{}`
 * so that bodiless posts (a heartbeat with nothing running) need no ceremony.
 */
export async function readJsonBody(request: IncomingMessage, limit: number): Promise<JsonBody> {
  const tooLarge = {
    ok: false,
    status: 413,
    message: `request body is larger than ${limit} bytes`,
  } as const;
  const body = await readBoundedBody(request, limit);
  if (body === undefined) return tooLarge;
  const text = body.toString("utf8");
  if (text.trim() === "") return { ok: true, value: {} };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    if (error instanceof SyntaxError) {
      return { ok: false, status: 400, message: `request body is not JSON: ${error.message}` };
    }
    throw error;
  }
}

/** Reads `request`'s body whole; undefined when it declares or grows past `limit` bytes. */
export async function readBoundedBody(
  request: IncomingMessage,
  limit: number,
): Promise<Buffer | undefined> {
  if (Number(request.headers["content-length"] ?? "0") > limit) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** An answer of `body` as JSON, never cached. */
export function jsonResponse(
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): Response {
  const text = JSON.stringify(body);
  return new Response(text, {
    status,
    headers: {
      "content-type": "application/json; charset=utf-8",
      "content-length": String(Buffer.byteLength(text)),
      "cache-control": "no-store",
      ...headers,
    },
  });
}
