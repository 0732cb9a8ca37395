import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";

/** Debian's Chromium (`apt-get install chromium`): playwright's own download is not used. */
const CHROMIUM = process.env.CLUSTERCODE_CHROMIUM ?? "/usr/bin/chromium";

/** Starts headless Chromium with nothing reaching out to the network on its own. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/** Why the browser tests cannot run here, when they cannot (.ci/run installs Chromium). */
export function chromiumMissing(): string | undefined {
  return existsSync(CHROMIUM)
    ? undefined
    : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CLUSTERCODE_CHROMIUM)`;
}
