import { createServer, type AddressInfo } from "node:net";

/** A TCP port on 127.0.0.1 that was free a moment ago, for a process that binds it itself. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", () => listening()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((closed) => server.close(() => closed()));
  return port;
}
