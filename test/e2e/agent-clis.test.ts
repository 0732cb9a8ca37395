/**
 * Contract tests against the real agent CLIs, at the versions the DevBox image pins (package.json's
 * devDependencies are the one place that names them). Each built-in engine's argv runs through a
 * local `clustercode run` against a loopback fake of its provider's API, pointed at by the
 * documented variables, so a version whose flags, key or endpoint handling changed fails here.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { estimateCostUsd } from "../../src/workflow/model-prices.js";
import { FAKE_USAGE, FakeProviders } from "./fake-providers.js";
import { cliEnv, devboxCheckouts, makeRepo, runCli, summaryOf } from "./local-cli.js";

const ROOT = join(import.meta.dirname, "..", "..");
const PROBE = join(import.meta.dirname, "fixtures", "key-probe.js");
const BIN = join(ROOT, "node_modules", ".bin");
const pinned = (
  JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    devDependencies: Record<string, string>;
  }
).devDependencies;

const providers = new FakeProviders();
let baseUrl: string;
beforeAll(async () => {
  baseUrl = await providers.listen();
});
afterAll(() => providers.close());

/** A workflow with one agent turn on `engine`, its DevBox given `secrets`. */
const oneTurn = (engine: string, model: string, secrets: string[]) => `version: 1
name: contract-${engine}
on: { label: go }
devbox: { secrets: [${secrets.join(", ")}] }
nodes:
  work: { kind: run, prompt: Say that you are done., agent: { engine: ${engine}, model: ${model} } }
`;

/**
 * A HOME for the CLIs with their background traffic (update checks, telemetry, error reports)
 * switched off: the network is closed, and an attempt must not cost the test time.
 */
function quietHome(root: string): string {
  const home = join(root, "home");
  mkdirSync(join(home, ".claude"), { recursive: true });
  const quiet = {
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_ERROR_REPORTING: "1",
  };
  writeFileSync(join(home, ".claude", "settings.json"), JSON.stringify({ env: quiet }));
  mkdirSync(join(home, ".codex"), { recursive: true });
  writeFileSync(
    join(home, ".codex", "config.toml"),
    "check_for_update_on_startup = false\n\n[analytics]\nenabled = false\n\n[feedback]\nenabled = false\n",
  );
  return home;
}

/** Runs `workflow` locally with the pinned CLIs first on PATH; the summary and the evidence. */
async function runTurn(
  workflow: string,
  env: Record<string, string>,
  files: Record<string, string> = {},
) {
  const { repo, state, root } = makeRepo(files);
  writeFileSync(join(root, "workflow.yml"), workflow);
  const result = await runCli(
    [
      "run",
      join(root, "workflow.yml"),
      "--repo",
      repo,
      "--brief",
      "Nothing to do.",
      "--state-dir",
      state,
      "--format",
      "json",
    ],
    {
      cwd: repo,
      env: cliEnv({ PATH: `${BIN}:${process.env.PATH ?? ""}`, HOME: quietHome(root), ...env }),
      timeoutMs: 90_000,
    },
  );
  const summary = summaryOf(result);
  const log = await runCli(["log", summary.run, "--state-dir", state, "--format", "json"], {
    cwd: repo,
  });
  const entries = log.stdout
    .trim()
    .split("\n")
    .map(
      (line) =>
        JSON.parse(line) as { kind: string; data?: Record<string, unknown> } & Record<
          string,
          unknown
        >,
    );
  return { result, summary, entries, state };
}

describe("the pinned agent CLIs", () => {
  it.each([
    ["claude", "@anthropic-ai/claude-code", /^(\S+) \(Claude Code\)$/],
    ["codex", "@openai/codex", /^codex-cli (\S+)$/],
  ])("%s is installed and answers --version with the pinned version", (program, pkg, pattern) => {
    const version = execFileSync(join(BIN, program), ["--version"], { encoding: "utf8" }).trim();
    expect(version).toMatch(pattern);
    expect(pattern.exec(version)?.[1]).toBe(pinned[pkg]);
  });
});

/** The evidence entry of `kind`, which must exist. */
const entry = (entries: Awaited<ReturnType<typeof runTurn>>["entries"], kind: string) => {
  const found = entries.find((candidate) => candidate.kind === kind);
  if (found === undefined) throw new Error(`no ${kind} in ${JSON.stringify(entries)}`);
  return found;
};

const usage = {
  inputTokens: FAKE_USAGE.input,
  outputTokens: FAKE_USAGE.output,
  cachedInputTokens: FAKE_USAGE.cached,
};

describe("built-in engines through clustercode run", () => {
  // This also runs as root here: the local executor tells Claude Code its DevBox is a sandbox.
  it("claude: Claude Code reaches the Messages API at ANTHROPIC_BASE_URL, and the run records its cost and tokens", async () => {
    const before = providers.calls("/v1/messages").length;
    const { summary, entries } = await runTurn(
      oneTurn("claude", "claude-sonnet-4-5", ["ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"]),
      { ANTHROPIC_API_KEY: "sk-ant-contract-test", ANTHROPIC_BASE_URL: baseUrl },
    );
    expect(summary.status).toBe("succeeded");
    const [call] = providers.calls("/v1/messages").slice(before);
    expect(call?.headers["x-api-key"]).toBe("sk-ant-contract-test");
    expect(call?.body).toMatchObject({ model: "claude-sonnet-4-5", stream: true });
    const finished = entry(entries, "command.finished");
    expect(finished).toMatchObject({ engine: "claude", exitCode: 0, usage });
    expect(finished.costUsd).toBeGreaterThan(0);
    expect((summary as { costUsd?: number }).costUsd).toBe(finished.costUsd);
    expect(JSON.stringify(entries)).not.toContain("sk-ant-contract-test");
  }, 120_000);

  it("codex: Codex reaches the Responses API at OPENAI_BASE_URL with OPENAI_API_KEY, and its tokens are priced", async () => {
    const before = providers.calls("/v1/responses").length;
    const { summary, entries } = await runTurn(
      oneTurn("codex", "gpt-5-mini", ["OPENAI_API_KEY", "OPENAI_BASE_URL"]),
      { OPENAI_API_KEY: "sk-openai-contract-test", OPENAI_BASE_URL: `${baseUrl}/v1` },
    );
    expect(summary.status).toBe("succeeded");
    const [call] = providers.calls("/v1/responses").slice(before);
    expect(call?.headers.authorization).toBe("Bearer sk-openai-contract-test");
    expect(call?.body).toMatchObject({ model: "gpt-5-mini", stream: true });
    const finished = entry(entries, "command.finished");
    expect(finished).toMatchObject({ engine: "codex", exitCode: 0, usage });
    const priced = estimateCostUsd("gpt-5-mini", usage);
    expect(priced).toBeGreaterThan(0);
    expect(finished.costUsd).toBe(priced);
    expect((summary as { costUsd?: number }).costUsd).toBe(priced);
    expect(JSON.stringify(entries)).not.toContain("sk-openai-contract-test");
  }, 120_000);

  it("the DevBox never holds the provider key: its agent gets a placeholder that only the hub's proxy takes, and what the proxy forwarded is the run's cost", async () => {
    const before = providers.calls("/v1/messages").length;
    const workflow = `version: 1
name: contract-proxy
on: { label: go }
budget: { max_cost_usd: 0.001 }
devbox: { secrets: [ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL] }
engines:
  probe: { command: [node, key-probe.js, .git/probe.json, "{prompt_file}"], cost: { json_path: cost } }
nodes:
  work: { kind: run, prompt: Probe., agent: { engine: probe } }
`;
    // The probe is the repository's own (a sandboxed DevBox sees its checkout only), and
    // writes what it saw into the checkout's .git, which the test reads.
    const { summary, entries, state } = await runTurn(
      workflow,
      { ANTHROPIC_API_KEY: "sk-ant-real-proxy-test", ANTHROPIC_BASE_URL: baseUrl },
      { "key-probe.js": readFileSync(PROBE, "utf8") },
    );
    // The agent says it spent nothing, but the proxy counted the reply it forwarded: the run's
    // cost is that reply's, which is over the budget, so the run stops on it.
    const reply = estimateCostUsd("claude-sonnet-4-5", usage);
    expect(summary).toMatchObject({ status: "failed", costUsd: reply });
    expect((summary as { reason?: string }).reason).toMatch(/run budget exceeded/);
    expect(entry(entries, "command.finished")).toMatchObject({
      costUsd: reply,
      proxiedCostUsd: reply,
    });
    const [checkout] = devboxCheckouts(state);
    const probe = JSON.parse(readFileSync(join(checkout ?? "", ".git", "probe.json"), "utf8")) as {
      env: Record<string, string>;
      calls: { status: number; body: string }[];
    };
    expect(JSON.stringify(probe.env)).not.toContain("sk-ant-real-proxy-test");
    expect(probe.env.ANTHROPIC_API_KEY).toMatch(/^clustercode-/);
    expect(probe.env.ANTHROPIC_BASE_URL).toMatch(
      /^http:\/\/127\.0\.0\.1:\d+\/internal\/devboxes\/.+\/providers\/anthropic$/,
    );
    // One reply costs more than the whole budget: the second call is refused, as is a guess.
    expect(probe.calls.map((call) => call.status)).toEqual([200, 402, 401]);
    expect(probe.calls[1]?.body).toMatch(/the run's budget is spent/);
    const calls = providers.calls("/v1/messages").slice(before);
    expect(calls.map((call) => call.headers["x-api-key"])).toEqual(["sk-ant-real-proxy-test"]);
  }, 120_000);

  it("an engine whose key is listed but not set fails its node naming the key, without starting the CLI", async () => {
    const before = providers.requests.length;
    const { result, summary, entries } = await runTurn(
      oneTurn("claude", "claude-sonnet-4-5", ["ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"]),
      { ANTHROPIC_BASE_URL: baseUrl },
    );
    expect(summary.status).toBe("failed");
    expect(result.code).toBe(1);
    const finished = entry(entries, "node.finished");
    expect(finished.outcome).toBe("failed");
    expect(finished.reason).toMatch(
      /^claude has no credentials: ANTHROPIC_API_KEY is not set in the DevBox .*list ANTHROPIC_API_KEY under devbox.secrets/,
    );
    expect(entry(entries, "command.finished")).toMatchObject({ exitCode: 78 });
    expect(providers.requests.length).toBe(before);
  }, 120_000);
});
