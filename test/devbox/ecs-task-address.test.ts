import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { internalApiUrlFromEnv } from "../../src/devbox/ecs-task-address.js";

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

describe("internalApiUrlFromEnv", () => {
  it("is the replica's own task address on ECS", async () => {
    const metadata = await metadataEndpoint(200, {
      Name: "app",
      Networks: [{ NetworkMode: "awsvpc", IPv4Addresses: ["10.0.3.17"] }],
    });
    await expect(
      internalApiUrlFromEnv({ ECS_CONTAINER_METADATA_URI_V4: metadata }, 8080),
    ).resolves.toBe("http://10.0.3.17:8080");
  });

  it("prefers an explicit URL, and is undefined off ECS", async () => {
    const env = {
      CLUSTERCODE_INTERNAL_API_URL: "http://box.internal:9000/",
      ECS_CONTAINER_METADATA_URI_V4: "x",
    };
    await expect(internalApiUrlFromEnv(env, 8080)).resolves.toBe("http://box.internal:9000");
    await expect(internalApiUrlFromEnv({}, 8080)).resolves.toBeUndefined();
    await expect(
      internalApiUrlFromEnv({ CLUSTERCODE_INTERNAL_API_URL: "nope" }, 1),
    ).rejects.toThrow('CLUSTERCODE_INTERNAL_API_URL must be a URL, got "nope"');
  });

  it("says what is wrong with the metadata", async () => {
    const empty = await metadataEndpoint(200, { Networks: [] });
    await expect(
      internalApiUrlFromEnv({ ECS_CONTAINER_METADATA_URI_V4: empty }, 8080),
    ).rejects.toMatchObject({ code: "invalid_config" });
    server?.close();
    const failing = await metadataEndpoint(500, {});
    await expect(
      internalApiUrlFromEnv({ ECS_CONTAINER_METADATA_URI_V4: failing }, 8080),
    ).rejects.toMatchObject({ code: "unavailable", retryable: true });
  });
});
