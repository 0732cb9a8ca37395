import { randomBytes } from "node:crypto";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { HubCacheClient } from "./hub-cache-client.js";
import {
  fileSha256,
  packPaths,
  setupCacheKey,
  unpackArchive,
  type CacheContext,
  type RestoreOutcome,
  type SetupCacheSettings,
} from "./setup-cache.js";

/** The setup cache kept by the hub (ECS DevBoxes): its client and where archives pass through. */
export interface HubSetupCache {
  client: HubCacheClient;
  /** A directory of the agent's own for the archives on their way (removed after each). */
  tmpDir: string;
}

/** What a restore from the hub found; `offered` false when the hub keeps no setup cache. */
export type HubRestoreOutcome = RestoreOutcome & { offered: boolean };

/**
 * Restores each entry the hub has (its run branch's, else its base branch's, as the hub
 * decides) into the checkout, as the local cache does: an archive that does not match the
 * checksum the hub sent, or does not unpack, is a miss with its paths cleared. A hub that keeps
 * no cache, or cannot be reached, is a miss too: nothing here fails the setup.
 */
export async function restoreFromHub(
  context: CacheContext,
  hub: HubSetupCache,
  cache: SetupCacheSettings,
  setup: readonly string[],
): Promise<HubRestoreOutcome> {
  const outcome: HubRestoreOutcome = { keys: [], hits: [], offered: true };
  for (const entry of cache.entries) {
    const key = await setupCacheKey(context.cwd, entry, setup);
    outcome.keys.push(key);
    if (!outcome.offered) {
      outcome.hits.push(false);
      continue;
    }
    const archive = join(hub.tmpDir, `cache-${key}-${randomBytes(6).toString("hex")}.tar`);
    const paths = entry.paths.join(", ");
    try {
      const fetched = await hub.client.fetch(key, archive);
      if (!fetched.found) {
        outcome.offered = fetched.offered;
        const why = fetched.why === undefined ? "" : `: ${fetched.why}`;
        context.say(
          fetched.offered
            ? `setup cache: no entry for ${paths} (${key})${why}`
            : `setup cache: the hub keeps no setup cache${why}`,
        );
        outcome.hits.push(false);
        continue;
      }
      const unpacked = await unpackArchive(context, entry, archive, fetched.sha256);
      context.say(
        unpacked
          ? `setup cache: restored ${paths} from the hub (${key})`
          : `setup cache: entry ${key} is damaged, ignored`,
      );
      outcome.hits.push(unpacked);
    } catch (error) {
      context.say(`setup cache: could not fetch ${paths} (${key}): ${(error as Error).message}`);
      outcome.hits.push(false);
    } finally {
      await rm(archive, { force: true });
    }
  }
  return outcome;
}

/**
 * Saves each entry that missed to the hub (its run branch's scope: the hub writes no other),
 * packed into the agent's own directory first and streamed from there. A save the hub refuses
 * (too large, setup over) is said and skipped.
 */
export async function saveToHub(
  context: CacheContext,
  hub: HubSetupCache,
  cache: SetupCacheSettings,
  outcome: HubRestoreOutcome,
): Promise<void> {
  if (!outcome.offered) return;
  for (const [index, entry] of cache.entries.entries()) {
    const key = outcome.keys[index];
    if (key === undefined || outcome.hits[index] === true) continue;
    const archive = join(hub.tmpDir, `save-${key}-${randomBytes(6).toString("hex")}.tar`);
    try {
      const present = await packPaths(context, entry, archive);
      if (present?.length === 0) continue;
      if (present === undefined) {
        context.say(`setup cache: could not save ${entry.paths.join(", ")}`);
        continue;
      }
      const stored = await hub.client.store(key, archive, await fileSha256(archive));
      context.say(
        stored.saved
          ? `setup cache: saved ${present.join(", ")} to the hub (${key})`
          : `setup cache: the hub did not keep ${present.join(", ")}: ${stored.why}`,
      );
    } catch (error) {
      const paths = entry.paths.join(", ");
      context.say(`setup cache: could not save ${paths}: ${(error as Error).message}`);
    } finally {
      await rm(archive, { force: true });
    }
  }
}
