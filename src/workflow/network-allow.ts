/**
 * `devbox.network.allow`: the hosts a DevBox may reach through the hub's egress proxy, by name
 * or by ecosystem shortcut. Pure data and checks, shared by the validator and the hub.
 */

/** What each shortcut stands for (HTTPS hosts). `github` also means the GHE host when set. */
export const NETWORK_SHORTCUTS = {
  npm: ["registry.npmjs.org", "registry.yarnpkg.com"],
  pypi: ["pypi.org", "files.pythonhosted.org"],
  github: [
    "github.com",
    "api.github.com",
    "codeload.github.com",
    "objects.githubusercontent.com",
    "raw.githubusercontent.com",
  ],
  crates: ["crates.io", "index.crates.io", "static.crates.io"],
  go: ["proxy.golang.org", "sum.golang.org"],
  maven: ["repo.maven.apache.org", "repo1.maven.org"],
  rubygems: ["rubygems.org", "index.rubygems.org"],
  debian: ["deb.debian.org", "security.debian.org"],
} as const satisfies Record<string, readonly string[]>;

export type NetworkShortcut = keyof typeof NETWORK_SHORTCUTS;

/** The package registries a DevBox reaches when `devbox.network.allow` is unset. */
export const DEFAULT_SHORTCUTS: readonly NetworkShortcut[] = ["npm", "pypi", "crates", "go"];

/** A DNS name (at least two labels) or a dotted IPv4 address; lower case, no port, no scheme. */
const HOST =
  /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

function isShortcut(entry: string): entry is NetworkShortcut {
  return Object.hasOwn(NETWORK_SHORTCUTS, entry);
}

/** Why `entry` is neither a shortcut nor a host name, or undefined when it is one. */
export function allowEntryProblem(entry: string): string | undefined {
  if (isShortcut(entry) || HOST.test(entry)) return undefined;
  const known = Object.keys(NETWORK_SHORTCUTS).join(", ");
  if (!entry.includes(".") && /^[a-z0-9-]+$/i.test(entry))
    return `network.allow: unknown shortcut "${entry}" (known: ${known}; or name a host such as api.example.com)`;
  return `network.allow: "${entry}" is not a host name: give a bare lower-case host such as api.example.com (no scheme, port or path), or a shortcut (${known})`;
}

/**
 * The hosts `allow` names: shortcuts expanded, the repository's host added to `github` (a GHE
 * host); unset, the package registries and the repository's host.
 */
export function allowedHosts(
  allow: readonly string[] | undefined,
  repositoryHost = "github.com",
): Set<string> {
  const hosts = new Set<string>();
  const add = (entry: string) => {
    if (entry === "github") {
      if (repositoryHost !== "github.com") hosts.add(repositoryHost.toLowerCase());
      else for (const host of NETWORK_SHORTCUTS.github) hosts.add(host);
    } else if (isShortcut(entry)) for (const host of NETWORK_SHORTCUTS[entry]) hosts.add(host);
    else hosts.add(entry.toLowerCase());
  };
  if (allow === undefined) for (const entry of [...DEFAULT_SHORTCUTS, "github"]) add(entry);
  else for (const entry of allow) add(entry);
  return hosts;
}
