import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** The file, inside a warm checkout's git directory (never committed), that says it is set up. */
export const WARM_MARKER_FILE = "clustercode-warm";

/** What a warm DevBox was made ready as: the commit it was set up at and the setup it ran. */
export interface WarmMarker {
  sha: string;
  setup: string[];
}

/** The marker's text, as {@link writeWarmMarker} writes it. */
export function warmMarkerText(marker: WarmMarker): string {
  return `${JSON.stringify(marker)}\n`;
}

/**
 * Records in `gitDir` that `setup` ran, and succeeded, at commit `sha`. For the DevBox's own
 * agent; the host writes into a DevBox's directory only without following links (see
 * `local/no-follow.ts`).
 */
export async function writeWarmMarker(gitDir: string, marker: WarmMarker): Promise<void> {
  await writeFile(join(gitDir, WARM_MARKER_FILE), warmMarkerText(marker), { mode: 0o644 });
}

/**
 * Whether the checkout whose git directory is `gitDir` already ran `setup` at `sha` while it
 * was warm: only then may a claimed DevBox skip its setup. Anything unreadable means no.
 */
export async function setUpWhileWarm(
  gitDir: string,
  sha: string,
  setup: readonly string[],
): Promise<boolean> {
  let marker: unknown;
  try {
    marker = JSON.parse(await readFile(join(gitDir, WARM_MARKER_FILE), "utf8"));
  } catch {
    return false;
  }
  if (typeof marker !== "object" || marker === null) return false;
  const { sha: warmSha, setup: warmSetup } = marker as Partial<WarmMarker>;
  return warmSha === sha && JSON.stringify(warmSetup) === JSON.stringify(setup);
}
