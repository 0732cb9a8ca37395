import { mkdtemp, mkdir, rm, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BUILT_IN_ENGINE_COMMANDS } from "../../../src/agents/engines.js";
import { missingCredentials } from "../../../src/devbox/agent/credentials.js";
import { executeCommand, substitute } from "../../../src/devbox/agent/run-command.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "clustercode-credentials-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const claude = BUILT_IN_ENGINE_COMMANDS.claude!;

describe("an agent without credentials", () => {
  it("is not started: the command fails with exit 78 and a message naming the variable", async () => {
    const marker = join(dir, "STARTED");
    const result = await executeCommand(
      {
        commandId: "c1",
        command: {
          type: "agent",
          argv: [
            process.execPath,
            "-e",
            `require("fs").writeFileSync(${JSON.stringify(marker)}, "")`,
          ],
          prompt: "Go",
          credentials: claude.credentials!,
        },
      },
      {
        cwd: dir,
        env: { PATH: process.env.PATH ?? "", HOME: dir, ANTHROPIC_API_KEY: "" },
        tmpRoot: dir,
        branch: "b",
        signal: new AbortController().signal,
      },
    );
    const refused = `${process.execPath} has no credentials: ANTHROPIC_API_KEY is not set in the DevBox (or one of ANTHROPIC_AUTH_TOKEN, CLAUDE_CODE_OAUTH_TOKEN, CLAUDE_CODE_USE_BEDROCK, CLAUDE_CODE_USE_VERTEX); list ANTHROPIC_API_KEY under devbox.secrets and set it where the workflow runs`;
    expect(result).toMatchObject({ exitCode: 78, refused, output: `clustercode: ${refused}\n` });
    expect(existsSync(marker)).toBe(false);
  });

  it("names codex's one key", () => {
    expect(missingCredentials("codex", BUILT_IN_ENGINE_COMMANDS.codex!.credentials, {})).toBe(
      "codex has no credentials: OPENAI_API_KEY is not set in the DevBox; list OPENAI_API_KEY under devbox.secrets and set it where the workflow runs",
    );
  });

  it("is satisfied by any one of the variables, or by a stored login under HOME", async () => {
    const credentials = claude.credentials;
    expect(missingCredentials("claude", credentials, { CLAUDE_CODE_OAUTH_TOKEN: "t" })).toBe(
      undefined,
    );
    expect(missingCredentials("claude", credentials, { HOME: dir })).toMatch(/no credentials/);
    await mkdir(join(dir, ".claude"));
    await writeFile(join(dir, ".claude", ".credentials.json"), "{}");
    expect(missingCredentials("claude", credentials, { HOME: dir })).toBe(undefined);
  });

  it("a declared engine, which names no credentials, is always started", () => {
    expect(missingCredentials("aider", undefined, {})).toBe(undefined);
  });
});

describe("{env:NAME} in an engine's argv", () => {
  const codex = BUILT_IN_ENGINE_COMMANDS.codex!.command;

  it("takes the variable's value: codex's provider gets OPENAI_BASE_URL", () => {
    const argv = substitute(codex, "/p", "gpt-5", { OPENAI_BASE_URL: "http://127.0.0.1:9/v1" });
    expect(argv).toContain("model_providers.clustercode-openai.base_url=http://127.0.0.1:9/v1");
  });

  it("leaves out the argument and its option when the variable is unset or empty", () => {
    const argv = substitute(codex, "/p", "gpt-5", { OPENAI_BASE_URL: "" });
    const set = substitute(codex, "/p", "gpt-5", { OPENAI_BASE_URL: "http://127.0.0.1:9/v1" });
    expect(argv.some((arg) => arg.includes("base_url"))).toBe(false);
    // The base URL's `-c` went with it; the others stay.
    expect(argv.filter((arg) => arg === "-c")).toHaveLength(
      set.filter((arg) => arg === "-c").length - 1,
    );
    expect(substitute(["tool", "--url={env:U}", "x"], "/p")).toEqual(["tool", "x"]);
  });
});
