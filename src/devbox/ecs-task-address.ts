import { EcsError } from "./ecs-error.js";

/** Environment variables {@link internalApiUrlFromEnv} reads. */
export const INTERNAL_API_ENV = {
  /** An explicit base URL for DevBoxes to reach this replica's internal API at. */
  url: "CLUSTERCODE_INTERNAL_API_URL",
  /** Set by ECS in every container: its task metadata endpoint (version 4). */
  metadata: "ECS_CONTAINER_METADATA_URI_V4",
} as const;

/**
 * The base URL DevBoxes are given for this replica's internal API. A DevBox must reach the very
 * replica that registered it (the hub keeps its DevBoxes in memory), so behind a load balancer
 * this is the replica's own address: `CLUSTERCODE_INTERNAL_API_URL` when set, else on ECS
 * `http://<the task's private IPv4>:<port>` from the container metadata endpoint. Undefined
 * elsewhere (local runs use the hub's own 127.0.0.1 URL).
 */
export async function internalApiUrlFromEnv(
  env: NodeJS.ProcessEnv,
  port: number,
): Promise<string | undefined> {
  const explicit = env[INTERNAL_API_ENV.url]?.trim();
  if (explicit !== undefined && explicit !== "") {
    if (!URL.canParse(explicit)) {
      throw new EcsError(
        "invalid_config",
        `${INTERNAL_API_ENV.url} must be a URL, got "${explicit}"`,
      );
    }
    return explicit.replace(/\/+$/, "");
  }
  const metadata = env[INTERNAL_API_ENV.metadata]?.trim();
  if (metadata === undefined || metadata === "") return undefined;
  let document: unknown;
  try {
    const response = await fetch(metadata, { signal: AbortSignal.timeout(5000) });
    if (!response.ok) throw new Error(`answered ${response.status}`);
    document = await response.json();
  } catch (error) {
    throw new EcsError("unavailable", `cannot read the ECS task metadata at ${metadata}`, {
      retryable: true,
      cause: error,
    });
  }
  const address = firstAddress(document);
  if (address === undefined) {
    throw new EcsError("invalid_config", "the ECS task metadata names no private IPv4 address");
  }
  return `http://${address}:${port}`;
}

/** `Networks[].IPv4Addresses[0]` of a container metadata document. */
function firstAddress(document: unknown): string | undefined {
  const networks = (document as { Networks?: unknown } | null)?.Networks;
  if (!Array.isArray(networks)) return undefined;
  for (const network of networks as { IPv4Addresses?: unknown }[]) {
    const addresses: unknown[] = Array.isArray(network.IPv4Addresses) ? network.IPv4Addresses : [];
    const address = addresses[0];
    if (typeof address === "string" && /^\d{1,3}(\.\d{1,3}){3}$/.test(address)) return address;
  }
  return undefined;
}
