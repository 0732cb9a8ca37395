/**
 * How the agent starts each command so that the command cannot act as the agent: it must not see
 * the agent's process (its memory holds the hub token), only the checkout and the network path
 * the agent gives it.
 *
 * - `bwrap` (local DevBoxes, already inside the agent's bubblewrap sandbox): a nested bwrap with
 *   its own user and PID namespace, so the agent's process is not there to read or trace.
 * - `setpriv:<user>` (ECS images, where the agent runs as root): the command runs as `<user>`
 *   with no capabilities and no way to gain privileges, so it cannot read root's /proc entries.
 */
export type CommandSandbox = (
  file: string,
  args: readonly string[],
) => { file: string; args: string[] };

/**
 * bwrap's arguments for a nested sandbox of the same files in a user and PID namespace of its
 * own, with its own /proc: the processes outside it are not there to read or trace.
 */
export const OWN_PID_NAMESPACE = [
  "--unshare-user",
  "--unshare-pid",
  "--dev-bind",
  "/",
  "/",
  "--proc",
  "/proc",
] as const;

/** The variable the executor sets to say how commands are sandboxed. */
export const COMMAND_SANDBOX_ENV = "CLUSTERCODE_COMMAND_SANDBOX";

/**
 * The wrapper `kind` names; undefined for none; an Error for a value it does not know.
 * `readOnly`: directories a command may read but never write (the setup cache's: only the
 * agent saves it, after `devbox.setup`, so no command can plant an entry a later DevBox restores).
 */
export function commandSandbox(
  kind: string | undefined,
  readOnly: readonly string[] = [],
): CommandSandbox | undefined | Error {
  if (kind === undefined || kind === "" || kind === "none") return undefined;
  if (kind === "bwrap") {
    const binds = readOnly.flatMap((dir) => ["--ro-bind-try", dir, dir]);
    return (file, args) => ({
      file: "bwrap",
      args: [...OWN_PID_NAMESPACE, ...binds, "--die-with-parent", "--", file, ...args],
    });
  }
  const user = /^setpriv:([a-z_][a-z0-9_-]{0,31})$/.exec(kind)?.[1];
  if (user !== undefined) {
    return (file, args) => ({
      file: "setpriv",
      args: [
        `--reuid=${user}`,
        `--regid=${user}`,
        "--init-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--no-new-privs",
        "--",
        file,
        ...args,
      ],
    });
  }
  return new Error(
    `${COMMAND_SANDBOX_ENV} must be "bwrap", "setpriv:<user>" or "none", got "${kind}"`,
  );
}
