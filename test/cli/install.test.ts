import { execFile } from "node:child_process";
import { mkdtemp, readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { WORKFLOW_SCHEMA_ID } from "../../src/workflow/json-schema.js";
import { CLI } from "./helpers.js";

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, "../..");
const manifest = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as {
  name: string;
  version: string;
  bin: Record<string, string>;
};
const npm = (args: string[], cwd = ROOT) =>
  run("npm", [...args, "--offline", "--ignore-scripts", "--no-audit", "--no-fund"], { cwd });

describe("installing the CLI from a clone", () => {
  it("npm install -g . puts clustercode on PATH", async () => {
    await readFile(CLI); // built by npm ci (prepare) or npm test
    const prefix = await mkdtemp(join(tmpdir(), "clustercode-prefix-"));
    await npm(["install", "--global", "--prefix", prefix, "."]);
    const bin = join(prefix, "bin");
    const elsewhere = await mkdtemp(join(tmpdir(), "clustercode-elsewhere-"));
    const { stdout } = await run("clustercode", ["--version"], {
      cwd: elsewhere,
      env: { ...process.env, PATH: `${bin}${delimiter}${process.env.PATH ?? ""}` },
    });
    expect(stdout).toBe(`clustercode ${manifest.version}\n`);
    // The schema is reachable through the package's exports, as an editor setting can name it.
    const resolve = createRequire(join(prefix, "lib", "index.js")).resolve;
    expect(resolve(`${manifest.name}/workflows-schema/workflow.schema.json`)).toMatch(
      /workflows-schema\/workflow\.schema\.json$/,
    );
  }, 60_000);

  it("packs what a published package needs: the bin, the schema its URL names, the examples", async () => {
    const { stdout } = await npm(["pack", "--dry-run", "--json"]);
    const [packed] = JSON.parse(stdout) as { name: string; files: { path: string }[] }[];
    const files = packed?.files.map((file) => file.path) ?? [];
    expect(packed?.name).toBe(manifest.name);
    expect(manifest.bin).toEqual({ clustercode: "dist/cli/main.js" });
    const schemaPath = WORKFLOW_SCHEMA_ID.replace(`https://unpkg.com/${manifest.name}/`, "");
    expect(schemaPath).not.toBe(WORKFLOW_SCHEMA_ID);
    expect(files).toEqual(
      expect.arrayContaining([
        "dist/cli/main.js",
        schemaPath,
        "workflows-schema/examples/first-workflow.yml",
        "package.json",
        "README.md",
      ]),
    );
    expect(files.filter((file) => file.startsWith("test/") || file.startsWith("src/"))).toEqual([]);
  }, 60_000);
});
