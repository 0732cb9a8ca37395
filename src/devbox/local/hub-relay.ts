import { chmod, rm } from "node:fs/promises";
import { connect, createServer, type Server, type Socket } from "node:net";

/**
 * A unix socket in a DevBox's directory whose every connection is piped to the hub's TCP port:
 * the only way out of the DevBox's network namespace (its agent relays 127.0.0.1 to it).
 */
export class HubRelay {
  readonly #server: Server;
  readonly #sockets: Set<Socket>;
  readonly path: string;

  private constructor(server: Server, path: string, sockets: Set<Socket>) {
    this.#server = server;
    this.path = path;
    this.#sockets = sockets;
  }

  /** Listens on `path` (replacing a stale socket) and relays to the host and port of `apiUrl`. */
  static async open(path: string, apiUrl: string, uid?: number): Promise<HubRelay> {
    const url = new URL(apiUrl);
    const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
    const host = url.hostname.replace(/^\[|\]$/g, "");
    await rm(path, { force: true });
    const sockets = new Set<Socket>();
    const server = createServer((inner) => {
      const outer = connect({ host, port });
      for (const socket of [inner, outer]) {
        sockets.add(socket);
        socket.once("close", () => sockets.delete(socket));
        socket.on("error", () => {
          inner.destroy();
          outer.destroy();
        });
      }
      inner.pipe(outer).pipe(inner);
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(path, () => resolve());
    });
    server.unref();
    // The DevBox's own uid (when the app is root) must be able to connect; nobody else sees it.
    await chmod(path, uid === undefined ? 0o600 : 0o666);
    return new HubRelay(server, path, sockets);
  }

  /** Stops listening and cuts every relayed connection. */
  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
    for (const socket of this.#sockets) socket.destroy();
    await rm(this.path, { force: true });
  }
}
