import { connect, createServer, type Server } from "node:net";

/**
 * Inside a local DevBox's network namespace, the agent listens on 127.0.0.1 at the hub's port and
 * pipes every connection to the hub relay's unix socket: the hub URL, the provider proxy URLs,
 * git over the hub and `CONNECT` through `HTTPS_PROXY` all reach the hub this way, and nothing
 * else is reachable.
 */
export async function openGateway(socketPath: string, apiUrl: string): Promise<Server> {
  const url = new URL(apiUrl);
  const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
  const server = createServer((inner) => {
    const outer = connect(socketPath);
    const cut = () => {
      inner.destroy();
      outer.destroy();
    };
    inner.on("error", cut);
    outer.on("error", cut);
    inner.pipe(outer).pipe(inner);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  server.unref();
  return server;
}
