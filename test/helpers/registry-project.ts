/**
 * A project with one real dependency from the npm registry (`is-number@7.0.0`, which has none of
 * its own): `npm ci` of it in a DevBox reaches the registry through the hub's egress proxy.
 */
export const REGISTRY_DEPENDENCY = { "is-number": "7.0.0" };

/** The lock file of a project named `name` that depends on {@link REGISTRY_DEPENDENCY}. */
export function registryLock(name: string): string {
  const lock = {
    name,
    version: "1.0.0",
    lockfileVersion: 3,
    requires: true,
    packages: {
      "": { name, version: "1.0.0", dependencies: REGISTRY_DEPENDENCY },
      "node_modules/is-number": {
        version: "7.0.0",
        resolved: "https://registry.npmjs.org/is-number/-/is-number-7.0.0.tgz",
        integrity:
          "sha512-41Cifkg6e8TylSpdtTpeLVMqvSBEVzTttHvERD741+pnZ8ANv0004MRL43QKPDlK9cGvNp6NZWZUBlbGXYxxng==",
        engines: { node: ">=0.12.0" },
      },
    },
  };
  return JSON.stringify(lock, null, 2);
}
