import { createServer as createHttpServer, request as httpRequest } from "node:http";
import { connect, createServer, type AddressInfo, type Server, type Socket } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { DevBoxHub } from "../../../src/devbox/hub/hub.js";
import type { EgressOptions } from "../../../src/devbox/hub/egress-proxy.js";

/** A loopback TCP echo: what an allowed host is in these tests (no TLS needed to carry bytes). */
let echo: Server;
let echoPort: number;
beforeAll(async () => {
  echo = createServer((socket) => socket.pipe(socket));
  await new Promise<void>((ready) => echo.listen(0, "127.0.0.1", () => ready()));
  echoPort = (echo.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((closed) => echo.close(() => closed())));

let hub: DevBoxHub | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await hub?.close();
  hub = undefined;
});

/** A hub with one DevBox allowed `allow`; its proxy URL and a wrong one. */
async function start(allow: string[] | undefined, egress: EgressOptions) {
  hub = new DevBoxHub({ onEvent: () => {}, egress });
  await hub.listen();
  const { token } = hub.register({ devboxId: "run1-d1", runId: "run1" });
  hub.allowEgress("run1-d1", allow);
  return { url: new URL(hub.egressProxyUrl("run1-d1")), token };
}

/** Resolves every allowed host to the echo server (an injected resolver, as DNS would). */
const toEcho: EgressOptions = {
  resolve: (_host, port) =>
    Promise.resolve({ host: "127.0.0.1", port: port === 443 ? echoPort : 1 }),
};

/** Sends `CONNECT target` to the hub as curl would; the status line and the open socket. */
async function connectVia(
  proxy: URL,
  target: string,
  credentials?: string,
): Promise<{ status: string; text: string; socket: Socket }> {
  const socket = connect(Number(proxy.port), proxy.hostname);
  sockets.push(socket);
  const auth =
    credentials === undefined
      ? ""
      : `Proxy-Authorization: Basic ${Buffer.from(credentials).toString("base64")}\r\n`;
  socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n${auth}\r\n`);
  let received = "";
  await new Promise<void>((done, fail) => {
    const onData = (chunk: Buffer) => {
      received += chunk.toString("utf8");
      const end = received.indexOf("\r\n\r\n");
      if (end === -1) return;
      const status = received.slice(0, received.indexOf("\r\n"));
      if (!status.includes(" 200 ")) {
        if (socket.readableEnded || received.includes("\n", end + 4)) finish();
        return;
      }
      finish();
    };
    const finish = () => {
      socket.off("data", onData);
      done();
    };
    socket.on("data", onData);
    socket.once("end", finish);
    socket.once("error", fail);
  });
  return { status: received.slice(0, received.indexOf("\r\n")), text: received, socket };
}

const credentialsOf = (url: URL) =>
  `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;

describe("the hub's egress proxy", () => {
  it("tunnels CONNECT to a host of the DevBox's allow-list (a shortcut expanded): bytes pass", async () => {
    const { url } = await start(["npm"], toEcho);
    const { status, socket } = await connectVia(url, "registry.npmjs.org:443", credentialsOf(url));
    expect(status).toBe("HTTP/1.1 200 Connection Established");
    socket.write("ping through the tunnel");
    const echoed = await new Promise<string>((got) =>
      socket.once("data", (chunk: Buffer) => got(chunk.toString("utf8"))),
    );
    expect(echoed).toBe("ping through the tunnel");
  });

  it("refuses a host off the list, and another port, with 403 and what to do", async () => {
    const { url } = await start(["npm"], toEcho);
    const off = await connectVia(url, "example.org:443", credentialsOf(url));
    expect(off.status).toBe("HTTP/1.1 403 Forbidden");
    expect(off.text).toContain("example.org is not allowed: add the host to devbox.network.allow");
    const port = await connectVia(url, "registry.npmjs.org:22", credentialsOf(url));
    expect(port.status).toBe("HTTP/1.1 403 Forbidden");
  });

  it("asks for credentials (407) without the DevBox's token, with a wrong one, and once it is released", async () => {
    const { url, token } = await start(["npm"], toEcho);
    const none = await connectVia(url, "registry.npmjs.org:443");
    expect(none.status).toBe("HTTP/1.1 407 Proxy Authentication Required");
    expect(none.text.toLowerCase()).toContain('proxy-authenticate: basic realm="clustercode"');
    const wrong = await connectVia(url, "registry.npmjs.org:443", `run1-d1:${"0".repeat(64)}`);
    expect(wrong.status).toBe("HTTP/1.1 407 Proxy Authentication Required");
    hub?.release("run1-d1");
    const released = await connectVia(url, "registry.npmjs.org:443", `run1-d1:${token}`);
    expect(released.status).toBe("HTTP/1.1 407 Proxy Authentication Required");
  });

  it("hands commands an egress key that is not the DevBox's token: it posts no result and opens no other DevBox's egress", async () => {
    const { url, token } = await start(["npm"], toEcho);
    const key = decodeURIComponent(url.password);
    expect(key).not.toBe(token);
    // An injected command reads the key from HTTPS_PROXY and tries it on the hub's API.
    const forged = await fetch(`${hub?.url}/internal/devboxes/run1-d1/results`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ commandId: "c1", exitCode: 0, output: "", durationMs: 1 }),
    });
    expect(forged.status).toBe(401);
    // Another DevBox of the hub: this key does not open its egress.
    hub?.register({ devboxId: "run2-d1", runId: "run2" });
    hub?.allowEgress("run2-d1", ["npm"]);
    const other = await connectVia(url, "registry.npmjs.org:443", `run2-d1:${key}`);
    expect(other.status).toBe("HTTP/1.1 407 Proxy Authentication Required");
    const own = await connectVia(url, "registry.npmjs.org:443", `run1-d1:${key}`);
    expect(own.status).toBe("HTTP/1.1 200 Connection Established");
  });

  it("without a list, allows the registries and the repository's host only", async () => {
    const { url } = await start(undefined, toEcho);
    for (const host of ["registry.npmjs.org", "pypi.org", "github.com"]) {
      expect((await connectVia(url, `${host}:443`, credentialsOf(url))).status, host).toContain(
        " 200 ",
      );
    }
    expect((await connectVia(url, "api.example.com:443", credentialsOf(url))).status).toContain(
      " 403 ",
    );
  });

  it("by default refuses a listed name or address that is internal (metadata, loopback)", async () => {
    const { url } = await start(["127.0.0.1", "169.254.169.254"], {});
    for (const target of ["127.0.0.1:443", "169.254.169.254:443"]) {
      const refused = await connectVia(url, target, credentialsOf(url));
      expect(refused.status, target).toBe("HTTP/1.1 403 Forbidden");
      expect(refused.text).toContain("an internal address");
    }
  });

  it("proxies plain-HTTP GET to an allowed host on port 80, without passing the DevBox's token on", async () => {
    const seen: { url?: string; host?: string; auth?: string }[] = [];
    const web = createHttpServer((req, res) => {
      seen.push({
        ...(req.url === undefined ? {} : { url: req.url }),
        ...(req.headers.host === undefined ? {} : { host: req.headers.host }),
        ...(req.headers["proxy-authorization"] === undefined
          ? {}
          : { auth: req.headers["proxy-authorization"] }),
      });
      res.end("Release file");
    });
    await new Promise<void>((ready) => web.listen(0, "127.0.0.1", () => ready()));
    const webPort = (web.address() as AddressInfo).port;
    try {
      const { url } = await start(["debian"], {
        resolve: (_host, port) =>
          Promise.resolve({ host: "127.0.0.1", port: port === 80 ? webPort : 1 }),
      });
      const get = (target: string, auth?: string) =>
        new Promise<{ status: number; body: string }>((done, fail) => {
          const req = httpRequest(
            {
              host: url.hostname,
              port: Number(url.port),
              path: target,
              headers:
                auth === undefined
                  ? {}
                  : { "proxy-authorization": `Basic ${Buffer.from(auth).toString("base64")}` },
            },
            (res) => {
              let body = "";
              res.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
              res.on("end", () => done({ status: res.statusCode ?? 0, body }));
            },
          );
          req.on("error", fail);
          req.end();
        });
      const ok = await get("http://deb.debian.org/debian/dists/stable/Release", credentialsOf(url));
      expect(ok).toEqual({ status: 200, body: "Release file" });
      expect(seen).toEqual([{ url: "/debian/dists/stable/Release", host: "deb.debian.org" }]);
      expect((await get("http://example.org/", credentialsOf(url))).status).toBe(403);
      expect((await get("http://deb.debian.org/")).status).toBe(407);
      expect(seen).toHaveLength(1);
    } finally {
      web.closeAllConnections();
      await new Promise<void>((closed) => web.close(() => closed()));
    }
  });
});
