import { EcsError } from "./error.js";

/** Set by ECS in every container: its task metadata endpoint (version 4). */
const METADATA_ENV = "ECS_CONTAINER_METADATA_URI_V4";

/**
 * This container's private IPv4 address on ECS, from the container metadata endpoint, where the
 * app's internal API listens for its DevBoxes (a DevBox must reach the very replica that
 * registered it: the hub keeps its DevBoxes in memory). Undefined outside ECS.
 */
export async function taskPrivateAddress(env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const metadata = env[METADATA_ENV]?.trim();
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
  return address;
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
