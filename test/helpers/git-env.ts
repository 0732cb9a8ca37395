/**
 * An environment for git in a test: `home` as its HOME, no system or user configuration, no
 * prompt, and a fixed author and committer; `env` adds to it.
 */
export function isolatedGitEnv(
  home: string,
  env: Record<string, string> = {},
): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "",
    HOME: home,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_TERMINAL_PROMPT: "0",
    GIT_AUTHOR_NAME: "t",
    GIT_AUTHOR_EMAIL: "t@example.com",
    GIT_COMMITTER_NAME: "t",
    GIT_COMMITTER_EMAIL: "t@example.com",
    ...env,
  };
}
