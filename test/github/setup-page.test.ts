import { spawn } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { setupPageHandler } from "../../src/github/setup/setup-page.js";
import { freePort } from "../helpers/free-port.js";

const ROOT = new URL("../../", import.meta.url).pathname;
const appYml = readFileSync(join(ROOT, "app.yml"), "utf8");

/** Serves the setup page alone on 127.0.0.1 and returns its base URL. */
async function servePage(env: NodeJS.ProcessEnv): Promise<{ url: string; server: Server }> {
  const handler = setupPageHandler({ appYml, env });
  const server = createServer((request, response) => {
    if (!handler(request, response)) response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** The manifest the page's Register button posts. */
function manifestOf(html: string): { hook_attributes: { url: string }; redirect_url: string } {
  const value = /name="manifest" value="([^"]*)"/.exec(html)?.[1] ?? "";
  const json = value
    .replaceAll("&quot;", '"')
    .replaceAll("&#39;", "'")
    .replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">")
    .replaceAll("&amp;", "&");
  return JSON.parse(json) as ReturnType<typeof manifestOf>;
}

let servers: Server[] = [];
afterEach(() => {
  for (const server of servers) server.close();
  servers = [];
});

describe("the setup page", () => {
  it("says what the app is and asks for, and warns that GitHub cannot reach a loopback webhook URL", async () => {
    const { url, server } = await servePage({});
    servers.push(server);
    const html = await (await fetch(`${url}/probot`)).text();
    expect(html).toContain("<h1>Set up ClusterCode Workflows</h1>");
    expect(html).toContain("Runs agent workflows committed as .clustercode/workflow.yml");
    expect(html).toContain(
      "<td>checks</td><td>write</td><td>run, node and validation check runs</td>",
    );
    expect(html).toContain("<td>members</td><td>read</td><td>team approvers (@org/team)</td>");
    expect(html).toContain("<td>check_run</td><td>Approve/Reject buttons (requested_action)</td>");
    expect(html).toContain(`GitHub cannot reach <code>${url}/</code>`);
    expect(html).toContain("WEBHOOK_PROXY_URL");
    const manifest = manifestOf(html);
    expect(manifest.hook_attributes.url).toBe(`${url}/`);
    expect(manifest.redirect_url).toBe(`${url}/probot/setup`);
    expect(manifest).toMatchObject({ name: "ClusterCode Workflows", public: false });
  });

  it("registers the app with webhooks to WEBHOOK_PROXY_URL when it is set", async () => {
    const { url, server } = await servePage({
      WEBHOOK_PROXY_URL: "https://smee.io/ClusterCodeDev",
    });
    servers.push(server);
    const html = await (await fetch(`${url}/probot`)).text();
    expect(manifestOf(html).hook_attributes.url).toBe("https://smee.io/ClusterCodeDev");
    expect(html).toContain("the proxy channel <code>https://smee.io/ClusterCodeDev</code>");
    expect(html).not.toContain("GitHub cannot reach");
  });

  it("is what npm start serves without credentials, with Probot's setup routes behind it", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "clustercode-setup-"));
    copyFileSync(join(ROOT, "app.yml"), join(cwd, "app.yml"));
    copyFileSync(join(ROOT, "package.json"), join(cwd, "package.json"));
    const port = await freePort();
    const child = spawn(process.execPath, [join(ROOT, "dist/github/main.js")], {
      cwd,
      env: {
        PATH: process.env.PATH,
        HOME: cwd,
        HOST: "127.0.0.1",
        PORT: String(port),
        NO_SMEE_SETUP: "true",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    try {
      const page = await getWhenUp(`http://127.0.0.1:${port}/probot`, () => output);
      expect(page).toContain("<h1>Set up ClusterCode Workflows</h1>");
      expect(page).toContain(`GitHub cannot reach <code>http://127.0.0.1:${port}/</code>`);
      const imported = await fetch(`http://127.0.0.1:${port}/probot/import`);
      expect(imported.status).toBe(200);
      expect(output).toContain("WEBHOOK_PROXY_URL is not set");
    } finally {
      child.kill("SIGKILL");
    }
  });
});

/** GETs `url` until the server answers (a bounded number of tries). */
async function getWhenUp(url: string, output: () => string): Promise<string> {
  for (let attempt = 0; attempt < 200; attempt++) {
    try {
      const response = await fetch(url);
      if (response.ok) return await response.text();
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${url} never answered; output: ${output()}`);
}
