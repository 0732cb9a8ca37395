import { rm, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LIFECYCLE, runCli, tempDir } from "./helpers.js";

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

async function importsOf(args: string[]): Promise<string[]> {
  const log = join(dir, `${args[0] ?? "none"}.log`);
  await writeFile(log, "");
  const result = await runCli(args, {
    nodeArgs: ["--import", pathToFileURL(join(dir, "register.mjs")).href],
    env: { IMPORT_LOG: log },
  });
  expect(result.code).toBe(0);
  return (await readFile(log, "utf8")).split("\n").filter((line) => line !== "");
}

const HEAVY = /(^|[\\/])(probot|@aws-sdk|@octokit|@smithy|dynalite|classic-level)([\\/]|$)/;

describe.each([["validate"], ["graph"]])("clustercode %s", (command) => {
  it("loads neither Probot nor the AWS SDK", async () => {
    const specifiers = await importsOf([command, LIFECYCLE]);
    // The hook saw the modules validate does need, so an empty result would mean something.
    expect(specifiers).toEqual(expect.arrayContaining(["yaml", "zod", "croner"]));
    expect(specifiers.filter((specifier) => HEAVY.test(specifier))).toEqual([]);
  });
});
