import { readFileSync } from "node:fs";
import { rm, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeRepo } from "../e2e/local-cli.js";
import { LIFECYCLE, runCli, tempDir } from "./helpers.js";

const FIRST_WORKFLOW = readFileSync(
  new URL("../../workflows-schema/examples/first-workflow.yml", import.meta.url),
  "utf8",
);

// Records every module specifier the process imports (ESM) or requires (CommonJS): a resolve
// hook on the loader thread and a patched Module.prototype.require on the main thread.
const HOOKS = `
import { appendFileSync } from "node:fs";
export async function resolve(specifier, context, next) {
  appendFileSync(process.env.IMPORT_LOG, specifier + "\\n");
  return next(specifier, context);
}
`;
const REGISTER = `
import Module, { register } from "node:module";
import { appendFileSync } from "node:fs";
register(new URL("./hooks.mjs", import.meta.url));
const require = Module.prototype.require;
Module.prototype.require = function (id) {
  appendFileSync(process.env.IMPORT_LOG, id + "\\n");
  return require.call(this, id);
};
`;

let dir: string;
beforeAll(async () => {
  dir = await tempDir();
  await writeFile(join(dir, "hooks.mjs"), HOOKS);
  await writeFile(join(dir, "register.mjs"), REGISTER);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function importsOf(args: string[], cwd?: string, code = 0): Promise<string[]> {
  const log = join(dir, `${args[0] ?? "none"}.log`);
  await writeFile(log, "");
  const result = await runCli(args, {
    nodeArgs: ["--import", pathToFileURL(join(dir, "register.mjs")).href],
    env: { IMPORT_LOG: log },
    ...(cwd === undefined ? {} : { cwd }),
  });
  expect(result.code, result.stderr).toBe(code);
  return (await readFile(log, "utf8")).split("\n").filter((line) => line !== "");
}

const HEAVY =
  /(^|[\\/])(probot|@aws-sdk|@octokit|@smithy|dynalite|classic-level|@opentelemetry)([\\/]|$)/;

describe.each([["validate"], ["graph"]])("clustercode %s", (command) => {
  it("loads neither Probot nor the AWS SDK", async () => {
    const specifiers = await importsOf([command, LIFECYCLE]);
    // The hook saw the modules validate does need, so an empty result would mean something.
    expect(specifiers).toEqual(expect.arrayContaining(["yaml", "zod", "croner"]));
    expect(specifiers.filter((specifier) => HEAVY.test(specifier))).toEqual([]);
  });
});

describe("clustercode run with no OTEL variable", () => {
  it("loads nothing of OpenTelemetry, so nothing is exported", async () => {
    const { repo, state } = makeRepo({ "workflow.yml": FIRST_WORKFLOW });
    const specifiers = await importsOf(["run", "workflow.yml", "--state-dir", state], repo, 3);
    // The run did load the store: the hook saw it, so the absence below means something.
    expect(specifiers).toContain("@aws-sdk/client-dynamodb");
    expect(specifiers.filter((specifier) => specifier.includes("@opentelemetry"))).toEqual([]);
  });
});

describe("clustercode run with no judge key", () => {
  it("loads no judge's SDK and not the ECS client, which it does not use", async () => {
    const { repo, state } = makeRepo({ "workflow.yml": FIRST_WORKFLOW });
    const specifiers = await importsOf(["run", "workflow.yml", "--state-dir", state], repo, 3);
    expect(specifiers).toContain("@aws-sdk/client-dynamodb");
    const unused = /^(openai|@anthropic-ai\/sdk|@aws-sdk\/client-ecs)([\\/]|$)/;
    expect(specifiers.filter((specifier) => unused.test(specifier))).toEqual([]);
  });
});
