/**
 * Git configuration, as environment of one git process (never argv, never `.git/config`), that
 * authenticates it to the hub's git route with the DevBox's own hub token.
 */
export function hubGitAuthEnv(token: string): Record<string, string> {
  return {
    GIT_CONFIG_COUNT: "1",
    GIT_CONFIG_KEY_0: "http.extraHeader",
    GIT_CONFIG_VALUE_0: `Authorization: Bearer ${token}`,
  };
}

/**
 * The same for the hub's own git processes talking to GitHub: the installation token as Basic
 * `x-access-token`, as GitHub expects. Only the hub ever holds it.
 */
export function installationTokenAuthEnv(token: string): Record<string, string> {
  const basic = Buffer.from(`x-access-token:${token}`).toString("base64");
  return {
    GIT_CONFIG_COUNT: "1",
    GIT_CONFIG_KEY_0: "http.extraHeader",
    GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}`,
  };
}
