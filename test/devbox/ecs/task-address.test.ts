import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { taskPrivateAddress } from "../../../src/devbox/ecs/task-address.js";

let server: Server | undefined;
afterEach(
  () => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())),
);

/** A task metadata endpoint on 127.0.0.1 answering `body`. */
async function metadataEndpoint(status: number, body: unknown): Promise<string> {
  server = createServer((_request, response) => {
    response.writeHead(status, { "content-type": "application/json" });
    response.end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v4/abc`;
}

describe("taskPrivateAddress", () => {
  it("is the replica's own private address on ECS", async () => {
    const metadata = await metadataEndpoint(200, {
      Name: "app",
      Networks: [{ NetworkMode: "awsvpc", IPv4Addresses: ["10.0.3.17"] }],
    });
    await expect(taskPrivateAddress({ ECS_CONTAINER_METADATA_URI_V4: metadata })).resolves.toBe(
      "10.0.3.17",
    );
  });

  it("is undefined off ECS", async () => {
    await expect(taskPrivateAddress({})).resolves.toBeUndefined();
  });

  it("says what is wrong with the metadata", async () => {
    const empty = await metadataEndpoint(200, { Networks: [] });
    await expect(
      taskPrivateAddress({ ECS_CONTAINER_METADATA_URI_V4: empty }),
    ).rejects.toMatchObject({ code: "invalid_config" });
    server?.close();
    const failing = await metadataEndpoint(500, {});
    await expect(
      taskPrivateAddress({ ECS_CONTAINER_METADATA_URI_V4: failing }),
    ).rejects.toMatchObject({ code: "unavailable", retryable: true });
  });
});
