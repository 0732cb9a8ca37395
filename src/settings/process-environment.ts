import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseEnv } from "node:util";
import { decodeSettings } from "./decode.js";
import type { Settings } from "./schema.js";
import { SettingsError } from "./settings-error.js";

/*
 * The only module that touches `process.env` (a lint rule keeps it so): the rest of the code is
 * handed the decoded settings, or an explicit environment for the child processes it starts.
 */

/**
 * This process's settings, decoded once at its start. A value that does not decode is said on
 * stderr, prefixed by `who`, and the process exits with `exitCode` before doing anything.
 */
export function settingsAtStart(who: string, exitCode: number): Settings {
  try {
    return decodeSettings(process.env);
  } catch (error) {
    if (!(error instanceof SettingsError)) throw error;
    process.stderr.write(`${who}: ${error.message}\n`);
    process.exit(exitCode);
  }
}

/** Applies `.env` of `cwd` to this process's environment as Probot's `run` does, before decoding. */
export function applyDotEnv(cwd: string): void {
  const file = join(cwd, ".env");
  if (existsSync(file)) Object.assign(process.env, parseEnv(readFileSync(file, "utf8")));
}

/**
 * A copy of this process's environment for a child process that inherits it (git, Probot's own
 * reading of its variables, a DevBox's allow-listed names): passed on, not read as settings.
 */
export function inheritedEnvironment(): Record<string, string> {
  const copy: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env))
    if (value !== undefined) copy[name] = value;
  return copy;
}

/**
 * WEBHOOK_PROXY_URL as it is now: in setup mode Probot's setup creates a smee.io channel after
 * the start and sets it in the environment, and the setup page shows it.
 */
export function webhookProxyUrlNow(): string | undefined {
  return process.env.WEBHOOK_PROXY_URL || undefined;
}

/** Turns off the AWS SDK's notice, on every start, that its 2027 releases want Node 22. */
export function quietAwsSdkNotice(): void {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
}
