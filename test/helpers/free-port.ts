import { createServer, type AddressInfo } from "node:net";

/** A TCP port on 127.0.0.1 that was free a moment ago, for a process that binds it itself. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", () => listening()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((closed) => server.close(() => closed()));
  return port;
}

/** Is `port` on 127.0.0.1 bound by someone now? (A port {@link freePort} gave can be taken.) */
export async function portTaken(port: number): Promise<boolean> {
  const server = createServer();
  const bound = await new Promise<boolean>((done) => {
    server.once("error", () => done(false));
    server.listen(port, "127.0.0.1", () => done(true));
  });
  if (bound) await new Promise<void>((closed) => server.close(() => closed()));
  return !bound;
}
