import { existsSync } from "node:fs";
import { join } from "node:path";
import type { EngineCredentials } from "../../engine/commands.js";

/** Exit code of an agent command the DevBox refused to start (sysexits' EX_CONFIG). */
export const MISSING_CREDENTIALS_EXIT = 78;

/**
 * Why an agent CLI cannot authenticate in this environment, or undefined when it can: none of
 * the credential variables is set (non-empty) and none of the login files exists under HOME.
 * Checked before the CLI starts, so a missing key fails the node naming the variable instead of
 * showing up as the agent's own "Not logged in" text in a command that exits 0.
 */
export function missingCredentials(
  program: string,
  credentials: EngineCredentials | undefined,
  env: Readonly<Record<string, string | undefined>>,
): string | undefined {
  if (credentials === undefined || credentials.env.length === 0) return undefined;
  if (credentials.env.some((name) => (env[name] ?? "") !== "")) return undefined;
  const home = env.HOME;
  const files = credentials.homeFiles ?? [];
  if (home !== undefined && files.some((file) => existsSync(join(home, file)))) return undefined;
  const [first = "", ...others] = credentials.env;
  const alternatives = others.length === 0 ? "" : ` (or one of ${others.join(", ")})`;
  return (
    `${program} has no credentials: ${first} is not set in the DevBox${alternatives}; ` +
    `list ${first} under devbox.secrets and set it where the workflow runs`
  );
}
