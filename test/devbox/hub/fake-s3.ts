/**
 * A local endpoint that speaks just enough of S3's REST protocol for the setup cache, path-style
 * (`/<bucket>/<key>`), on 127.0.0.1: GetObject, PutObject and HeadObject, with `x-amz-meta-*`
 * metadata. Like S3, a PutObject makes the object only once it received every byte its
 * `content-length` announced; an upload cut short leaves what was there. Every request is
 * recorded. Signatures are not checked.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** An object as the fake keeps it. */
export interface FakeObject {
  body: Buffer;
  metadata: Record<string, string>;
}

/** A request the fake received. */
export interface S3Request {
  method: string;
  bucket: string;
  key: string;
}

/** The fake S3 service of one bucket. */
export class FakeS3 {
  readonly objects = new Map<string, FakeObject>();
  readonly requests: S3Request[] = [];
  readonly #server = createServer((request, response) => {
    this.#handle(request, response).catch(() => response.destroy());
  });

  constructor(readonly bucket: string) {}

  /** Starts serving on 127.0.0.1; returns the endpoint URL. */
  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise((resolve) => this.#server.close(resolve));
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? "/", "http://s3");
    const [, bucket = "", ...rest] = url.pathname.split("/");
    const key = rest.map((part) => decodeURIComponent(part)).join("/");
    const method = request.method ?? "";
    this.requests.push({ method, bucket, key });
    if (bucket !== this.bucket) return fault(response, 404, "NoSuchBucket");
    if (method === "PUT") return this.#put(request, response, key);
    const object = this.objects.get(key);
    if (method !== "GET" && method !== "HEAD") return fault(response, 405, "MethodNotAllowed");
    if (object === undefined) {
      // HEAD answers carry no body: S3 says "NotFound" by its status alone.
      if (method === "HEAD") return void response.writeHead(404).end();
      return fault(response, 404, "NoSuchKey");
    }
    const headers: Record<string, string> = {
      "content-length": String(object.body.length),
      "content-type": "application/x-tar",
      etag: '"fake"',
    };
    for (const [name, value] of Object.entries(object.metadata)) {
      headers[`x-amz-meta-${name}`] = value;
    }
    response.writeHead(200, headers);
    response.end(method === "HEAD" ? undefined : object.body);
  }

  async #put(request: IncomingMessage, response: ServerResponse, key: string): Promise<void> {
    const length = Number(request.headers["content-length"] ?? Number.NaN);
    if (!Number.isInteger(length)) return fault(response, 411, "MissingContentLength");
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of request) chunks.push(chunk as Buffer);
    } catch {
      return; // cut off: nothing is made
    }
    const body = Buffer.concat(chunks);
    if (!request.complete || body.length !== length) return fault(response, 400, "IncompleteBody");
    const metadata: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers)) {
      if (name.startsWith("x-amz-meta-") && typeof value === "string") {
        metadata[name.slice("x-amz-meta-".length)] = value;
      }
    }
    this.objects.set(key, { body, metadata });
    response.writeHead(200, { etag: '"fake"' }).end();
  }
}

function fault(response: ServerResponse, status: number, code: string): void {
  response.writeHead(status, { "content-type": "application/xml" });
  response.end(
    `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${code}</Message></Error>`,
  );
}
