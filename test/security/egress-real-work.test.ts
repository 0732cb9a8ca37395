/**
 * The egress wall does real work: a sandboxed local DevBox (the product's defaults, bubblewrap
 * on) whose workflow allows `npm` installs a real package from the npm registry through the
 * hub's egress proxy, and the same DevBox is refused a host off its list with the proxy's 403.
 */
import { writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { REGISTRY_DEPENDENCY, registryLock } from "../helpers/registry-project.js";
import { makeRepo, runCli } from "../e2e/local-cli.js";

/** Asks the DevBox's HTTPS_PROXY for a tunnel to example.com and prints the proxy's answer. */
const PROBE = `import { connect } from "node:net";
const proxy = new URL(process.env.HTTPS_PROXY);
const user = \`\${decodeURIComponent(proxy.username)}:\${decodeURIComponent(proxy.password)}\`;
const socket = connect(Number(proxy.port), proxy.hostname, () =>
  socket.write(
    "CONNECT example.com:443 HTTP/1.1\\r\\nHost: example.com:443\\r\\n" +
      \`Proxy-Authorization: Basic \${Buffer.from(user).toString("base64")}\\r\\n\\r\\n\`,
  ),
);
socket.pipe(process.stdout);
`;

const workflow = (): string =>
  [
    "version: 1",
    "name: install",
    "on:",
    "  label: go",
    "devbox:",
    "  network:",
    "    allow: [npm]",
    "nodes:",
    "  install:",
    "    kind: run",
    "    run: |",
    // A fresh cache inside the DevBox: the package comes from the registry, not the host.
    `      npm ci --cache "$TMPDIR/npm-cache" --no-audit --no-fund`,
    `      node -e 'console.log("is-number says", require("is-number")(7))'`,
    "      node probe.mjs",
    '      curl -sS https://example.com || echo "curl exit $?"',
    "",
  ].join("\n");

const roots: string[] = [];
afterAll(async () => {
  for (const root of roots) await rm(root, { recursive: true, force: true });
});

describe("a sandboxed DevBox allowed npm", () => {
  it("installs a package from the registry through the egress proxy, and is refused example.com", async () => {
    const { repo, state, root } = makeRepo({
      "package.json": JSON.stringify({
        name: "demo",
        version: "1.0.0",
        dependencies: REGISTRY_DEPENDENCY,
      }),
      "package-lock.json": registryLock("demo"),
      "probe.mjs": PROBE,
    });
    roots.push(root);
    writeFileSync(join(root, "install.yml"), workflow());
    // The product's defaults: the DevBox is sandboxed.
    // Where a network re-signs TLS with its own authority (as this machine's does), the host
    // trusts it through NODE_EXTRA_CA_CERTS, which DevBoxes inherit.
    const { PATH, HOME, NODE_EXTRA_CA_CERTS } = process.env;
    const env = {
      PATH,
      HOME,
      ...(NODE_EXTRA_CA_CERTS === undefined ? {} : { NODE_EXTRA_CA_CERTS }),
    };

    const run = await runCli(
      ["run", join(root, "install.yml"), "--repo", repo, "--state-dir", state],
      { cwd: repo, env, timeoutMs: 150_000 },
    );
    const output = `${run.stdout}\n${run.stderr}`;

    expect(output).toContain("DevBox isolation: bubblewrap");
    expect(output).toContain("added 1 package");
    expect(output).toContain("is-number says true");
    expect(output).toContain("HTTP/1.1 403 Forbidden");
    expect(output).toContain(
      "clustercode egress: example.com is not allowed: add the host to devbox.network.allow",
    );
    expect(output).toContain("CONNECT tunnel failed, response 403");
    expect(run.code, output).toBe(0);
  }, 180_000);
});
