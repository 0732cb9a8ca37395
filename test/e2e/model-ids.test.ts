/**
 * The price list against the model ids the pinned agent CLIs really send. Each CLI runs (in
 * print/exec mode, in parallel) against a loopback fake of its provider for every model the
 * docs and the example workflows name, for the short aliases, and with no model at all (the
 * CLI's default); the fake records the `model` of each request. A budget can only bill what the
 * price list names exactly, so every id sent must be in it, as must every id the docs name
 * (a judge sends its model as written).
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { BUILT_IN_ENGINE_COMMANDS } from "../../src/agents/engines.js";
import { priceOf } from "../../src/workflow/model-prices.js";
import { requestBounds } from "../../src/devbox/hub/request-bounds.js";
import { FakeProviders } from "./fake-providers.js";

const ROOT = join(import.meta.dirname, "..", "..");
const BIN = join(ROOT, "node_modules", ".bin");
/** What the pinned Codex sends without `--model`; unpriced (see the test). */
const CODEX_DEFAULT_UNPRICED = "gpt-6.2-sol";
const providers = new FakeProviders();
let baseUrl: string;
beforeAll(async () => {
  baseUrl = await providers.listen();
});
afterAll(() => providers.close());

/** Every `model: <id>` the docs, the README and the example workflows name. */
function documentedModels(): string[] {
  const docs = readdirSync(join(ROOT, "docs")).filter((name) => name.endsWith(".md"));
  const examples = readdirSync(join(ROOT, "workflows-schema", "examples"));
  const texts = [
    readFileSync(join(ROOT, "README.md"), "utf8"),
    ...docs.map((name) => readFileSync(join(ROOT, "docs", name), "utf8")),
    ...examples.map((name) =>
      readFileSync(join(ROOT, "workflows-schema", "examples", name), "utf8"),
    ),
  ];
  const ids = texts.flatMap((text) =>
    [...text.matchAll(/\bmodel: ((?:claude|gpt|o\d|codex)[A-Za-z0-9._-]*)/g)].map(
      (match) => match[1] ?? "",
    ),
  );
  return [...new Set(ids)].filter((id) => id !== "").sort();
}

/** A HOME with the CLIs' background traffic switched off (the network is closed). */
function quietHome(): string {
  const home = join(mkdtempSync(join(tmpdir(), "clustercode-model-ids-")), "home");
  mkdirSync(join(home, ".claude"), { recursive: true });
  const env = {
    DISABLE_AUTOUPDATER: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_ERROR_REPORTING: "1",
  };
  writeFileSync(join(home, ".claude", "settings.json"), JSON.stringify({ env }));
  mkdirSync(join(home, ".codex"), { recursive: true });
  writeFileSync(
    join(home, ".codex", "config.toml"),
    "check_for_update_on_startup = false\n\n[analytics]\nenabled = false\n\n[feedback]\nenabled = false\n",
  );
  return home;
}

/**
 * The built-in engine's argv for `model` (undefined: the CLI's default), its program from the
 * pinned packages; the `--model {model}` pair is dropped without a model, as the DevBox does.
 */
function argvOf(engine: "claude" | "codex", model: string | undefined): string[] {
  const template = BUILT_IN_ENGINE_COMMANDS[engine]?.command ?? [];
  const argv: string[] = [];
  for (let index = 0; index < template.length; index++) {
    const part = template[index] ?? "";
    if (part === "--model") {
      if (model !== undefined) argv.push(part, model);
      index++;
      continue;
    }
    argv.push(
      part.replace("{prompt_file}", "task.md").replace("{env:OPENAI_BASE_URL}", `${baseUrl}/v1`),
    );
  }
  return argv;
}

/** Runs one CLI with its own key (which tells its requests apart); resolves when it exits. */
function runCli(
  engine: "claude" | "codex",
  model: string | undefined,
  key: string,
): Promise<string> {
  const home = quietHome();
  const workdir = join(home, "..");
  writeFileSync(join(workdir, "task.md"), "Say that you are done.\n");
  const [program, ...args] = argvOf(engine, model);
  const env: NodeJS.ProcessEnv = {
    PATH: `${BIN}:${process.env.PATH ?? ""}`,
    HOME: home,
    IS_SANDBOX: "1",
    ...(engine === "claude"
      ? { ANTHROPIC_API_KEY: key, ANTHROPIC_BASE_URL: baseUrl }
      : { OPENAI_API_KEY: key, OPENAI_BASE_URL: `${baseUrl}/v1` }),
  };
  return new Promise((resolve) => {
    const child = execFile(
      join(BIN, program ?? ""),
      args,
      { cwd: workdir, env, timeout: 90_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) =>
        resolve(`${error?.message ?? "exit 0"}\n${stdout.slice(-2000)}\n${stderr.slice(-2000)}`),
    );
    child.stdin?.end();
  });
}

/** The models of the billed requests a run with `key` made. */
function modelsSentWith(key: string): string[] {
  const sent = providers.requests.filter(
    (request) =>
      request.method === "POST" &&
      (request.headers["x-api-key"] === key || request.headers.authorization === `Bearer ${key}`),
  );
  return sent.map((request) => String(request.body?.model));
}

it("the price list holds the exact id of every model the docs name and every id the pinned CLIs send for them", async () => {
  const documented = documentedModels();
  expect(documented).toEqual(
    expect.arrayContaining(["claude-opus-4-1", "claude-sonnet-4-5", "gpt-5-codex"]),
  );
  const claude = [
    ...documented.filter((id) => id.startsWith("claude-")),
    "opus",
    "sonnet",
    "haiku",
    undefined,
  ];
  const codex = [...documented.filter((id) => !id.startsWith("claude-")), undefined];
  const runs = [
    ...claude.map((model, index) => ({
      engine: "claude" as const,
      model,
      key: `sk-ant-ids-${index}`,
    })),
    ...codex.map((model, index) => ({
      engine: "codex" as const,
      model,
      key: `sk-openai-ids-${index}`,
    })),
  ];
  const outputs = await Promise.all(runs.map((run) => runCli(run.engine, run.model, run.key)));
  const sent = runs.map((run, index) => ({
    engine: run.engine,
    model: run.model ?? "(default)",
    sent: modelsSentWith(run.key),
    output: outputs[index],
  }));
  for (const run of sent) {
    // A CLI that sent nothing says nothing about its ids: that is a failure, with its output.
    expect(run.sent, `${run.engine} --model ${run.model}: ${run.output}`).not.toEqual([]);
  }
  // The default of the pinned Codex is a model OpenAI publishes no price for: a budgeted run
  // must name a priced model for Codex (the proxy refuses the default, saying so).
  const codexDefault = sent.find((run) => run.engine === "codex" && run.model === "(default)");
  expect(codexDefault?.sent).toEqual([CODEX_DEFAULT_UNPRICED]);
  expect(priceOf(CODEX_DEFAULT_UNPRICED)).toBeUndefined();
  const unpriced = [...documented, ...sent.flatMap((run) => run.sent)].filter(
    (id) => id !== CODEX_DEFAULT_UNPRICED && priceOf(id) === undefined,
  );
  expect(unpriced, JSON.stringify(sent.map(({ output: _, ...run }) => run))).toEqual([]);
  // And what they send is bounded: a budget does not refuse the CLIs' ordinary requests.
  const unbounded = providers.requests.flatMap((request) => {
    if (request.method !== "POST" || request.body === undefined) return [];
    const provider = request.path === "/v1/messages" ? "anthropic" : "openai";
    const why = requestBounds(provider, request.body).unbounded;
    return why === undefined ? [] : [`${String(request.body.model)}: ${why}`];
  });
  expect(unbounded).toEqual([]);
}, 180_000);
