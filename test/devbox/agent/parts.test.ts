import { appendFileSync, mkdtempSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import devbox from "../../../src/cli/devbox-command.js";
import { UsageError } from "../../../src/cli/command.js";
import { readAgentSettings } from "../../../src/devbox/agent/settings.js";
import { decodeSettings } from "../../../src/settings/index.js";
import { SecretMask } from "../../../src/devbox/agent/secret-mask.js";
import { CommandJournal, JOURNAL_FILE } from "../../../src/devbox/agent/command-journal.js";
import {
  findLastJsonObject,
  normalizeUsage,
  readAgentSpend,
  readReportedCost,
} from "../../../src/devbox/agent/cost.js";
import { OutputTail } from "../../../src/devbox/output-tail.js";
import { isAlive, waitForExit } from "../../../src/devbox/local/process-info.js";
import { runProcess } from "../../../src/devbox/process-runner.js";
import { substitute } from "../../../src/devbox/agent/run-command.js";

const root = mkdtempSync(join(tmpdir(), "clustercode-agent-parts-"));
afterAll(() => rm(root, { recursive: true, force: true }));

describe("cost reports", () => {
  it("reads the last JSON object an agent printed, line-delimited or pretty-printed", () => {
    const lines = 'working\n{"cost":1}\n{"type":"result","usage":{"cost_usd":0.5}}\nDone.\n';
    expect(findLastJsonObject(lines)).toEqual({ type: "result", usage: { cost_usd: 0.5 } });
    const pretty = 'log {not json}\n{\n  "total_cost_usd": 1.25,\n  "result": "ok"\n}\n';
    expect(readReportedCost(pretty, "total_cost_usd")).toBe(1.25);
    expect(readReportedCost(lines, "usage.cost_usd")).toBe(0.5);
  });

  it("finds no cost where there is none or it is not a usable number", () => {
    expect(readReportedCost("no json at all", "cost")).toBeUndefined();
    expect(readReportedCost('{"cost":-1}', "cost")).toBeUndefined();
    expect(readReportedCost('{"cost":"0.3"}', "cost")).toBe(0.3);
    expect(readReportedCost('{"usage":{}}', "usage.cost")).toBeUndefined();
    expect(readReportedCost('{"a":1}', "constructor")).toBeUndefined();
    expect(readReportedCost("[1,2]", "0")).toBeUndefined();
  });
});

describe("token usage", () => {
  it("reads the shapes agent CLIs print", () => {
    const anthropic = {
      input_tokens: 10,
      cache_read_input_tokens: 100,
      cache_creation_input_tokens: 5,
      output_tokens: 7,
    };
    expect(normalizeUsage(anthropic)).toEqual({
      inputTokens: 115,
      outputTokens: 7,
      cachedInputTokens: 100,
    });
    expect(normalizeUsage({ input_tokens: 50, cached_input_tokens: 20, output_tokens: 3 })).toEqual(
      { inputTokens: 50, outputTokens: 3, cachedInputTokens: 20 },
    );
    expect(
      normalizeUsage({
        prompt_tokens: 9,
        completion_tokens: 2,
        prompt_tokens_details: { cached_tokens: 0 },
      }),
    ).toEqual({ inputTokens: 9, outputTokens: 2 });
    expect(normalizeUsage({ input_tokens: 1 })).toBeUndefined();
    expect(normalizeUsage("lots")).toBeUndefined();
  });

  it("reports cost and usage together, and which paths held nothing", () => {
    const stdout = '{"total_cost_usd":0.2,"usage":{"input_tokens":4,"output_tokens":1}}\n';
    expect(
      readAgentSpend(stdout, { costJsonPath: "total_cost_usd", usageJsonPath: "usage" }),
    ).toEqual({ costUsd: 0.2, usage: { inputTokens: 4, outputTokens: 1 }, missing: [] });
    expect(readAgentSpend(stdout, { costJsonPath: "cost", usageJsonPath: "tokens" })).toEqual({
      missing: ["cost", "tokens"],
    });
  });
});

describe("agent argv", () => {
  it("substitutes the prompt file and the model inside arguments", () => {
    const argv = ["aider", "--model={model}", "--message-file", "{prompt_file}", "x{prompt_file}"];
    expect(substitute(argv, "/p/prompt.md", "gpt-5")).toEqual([
      "aider",
      "--model=gpt-5",
      "--message-file",
      "/p/prompt.md",
      "x/p/prompt.md",
    ]);
  });

  it("leaves the model option out when no model is given", () => {
    expect(substitute(["claude", "-p", "--model", "{model}", "{prompt_file}"], "/f")).toEqual([
      "claude",
      "-p",
      "/f",
    ]);
    expect(substitute(["tool", "--model={model}", "{model}"], "/f")).toEqual(["tool"]);
  });
});

describe("OutputTail", () => {
  it("keeps the last bytes, starting at a character boundary", () => {
    const tail = new OutputTail(6);
    tail.push("abc");
    expect(tail.text()).toBe("abc");
    expect(tail.truncated).toBe(false);
    tail.push("défghij");
    expect(tail.truncated).toBe(true);
    // The last 6 bytes start inside "é": its orphaned second byte is dropped.
    expect(tail.text()).toBe("fghij");
    const accents = new OutputTail(5);
    accents.push("éééé");
    expect(accents.text()).toBe("éé");
  });
});

describe("runProcess", () => {
  const run = (script: string, signal: AbortSignal, output = new OutputTail(1024)) =>
    runProcess({
      file: "bash",
      args: ["-eo", "pipefail", "-c", script],
      cwd: root,
      env: { PATH: process.env.PATH ?? "" },
      signal,
      output,
      killGraceMs: 300,
    });

  it("reports exit codes, and 127 for a program that does not exist", async () => {
    const never = new AbortController().signal;
    expect(await run("exit 7", never)).toEqual({ exitCode: 7 });
    const output = new OutputTail(1024);
    const missing = await runProcess({
      file: "no-such-program-here",
      args: [],
      cwd: root,
      env: {},
      signal: never,
      output,
    });
    expect(missing).toEqual({ exitCode: 127 });
    expect(output.text()).toBe("clustercode: cannot run no-such-program-here: ENOENT\n");
  });

  it("kills the whole process group on abort, including what ignores SIGTERM", async () => {
    const controller = new AbortController();
    const output = new OutputTail(1024);
    const running = run(
      '(trap "" TERM; exec sleep 30) & echo "child=$!"; wait',
      controller.signal,
      output,
    );
    let child = 0;
    while (child === 0) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      child = Number(/child=(\d+)/.exec(output.text())?.[1] ?? 0);
    }
    controller.abort();
    expect(await running).toEqual({ exitCode: 143 });
    expect(await waitForExit(child, 2000)).toBe(true);
    expect(await isAlive(child)).toBe(false);
  });
});

describe("agent settings", () => {
  const env = {
    CLUSTERCODE_DEVBOX_TOKEN: "t",
    CLUSTERCODE_RUN_ID: "r",
    CLUSTERCODE_BRANCH: "clustercode/1-1",
    CLUSTERCODE_BASE_BRANCH: "main",
  };

  it("reads defaults and the setup array", () => {
    expect(
      readAgentSettings(
        decodeSettings({
          ...env,
          CLUSTERCODE_SETUP: '["npm ci"]',
          CLUSTERCODE_SECRET_NAMES: '["NPM_TOKEN"]',
        }),
      ),
    ).toEqual({
      ok: true,
      settings: {
        token: "t",
        runId: "r",
        branch: "clustercode/1-1",
        baseBranch: "main",
        setup: ["npm ci"],
        secrets: ["NPM_TOKEN"],
        harnesses: [],
        heartbeatMs: 3000,
        lapseMs: 15_000,
      },
    });
  });

  it("says everything that is missing at once", () => {
    const result = readAgentSettings(
      decodeSettings({
        CLUSTERCODE_COMMAND_SANDBOX: "chroot",
        CLUSTERCODE_DEVBOX_HEARTBEAT_MS: "20000",
      }),
    );
    expect(result.ok).toBe(false);
    const problems = result.ok ? [] : result.message.split("; ");
    expect(problems).toEqual([
      "CLUSTERCODE_DEVBOX_TOKEN is not set",
      "CLUSTERCODE_RUN_ID is not set",
      "CLUSTERCODE_BRANCH is not set",
      "CLUSTERCODE_BASE_BRANCH is not set",
      'CLUSTERCODE_COMMAND_SANDBOX must be "bwrap", "setpriv:<user>" or "none", got "chroot"',
    ]);
    const timings = readAgentSettings(
      decodeSettings({ ...env, CLUSTERCODE_DEVBOX_HEARTBEAT_MS: "20000" }),
    );
    expect(timings).toEqual({
      ok: false,
      message: "CLUSTERCODE_DEVBOX_HEARTBEAT_MS must be shorter than CLUSTERCODE_DEVBOX_LAPSE_MS",
    });
  });
});

describe("CommandJournal", () => {
  it("remembers started and finished commands across agents, ignoring a torn last line", async () => {
    const gitDir = mkdtempSync(join(root, "git-"));
    const first = await CommandJournal.open(gitDir);
    await first.markStarted("c1");
    await first.markFinished({ commandId: "c1", exitCode: 0, output: "ok", durationMs: 3 });
    await first.markStarted("c2");
    appendFileSync(join(gitDir, JOURNAL_FILE), '{"commandId":"c3","sta');
    const second = await CommandJournal.open(gitDir);
    expect(second.lookup("c1")).toEqual({
      state: "finished",
      result: { commandId: "c1", exitCode: 0, output: "ok", durationMs: 3 },
    });
    expect(second.lookup("c2")).toEqual({ state: "started" });
    expect(second.lookup("c3")).toBeUndefined();
  });
});

describe("clustercode devbox", () => {
  const io = (env: NodeJS.ProcessEnv) => ({
    stdout: { write: () => true },
    stderr: { write: () => true },
    cwd: root,
    settings: decodeSettings(env),
    env,
  });

  it("refuses to start without its options or its token", async () => {
    await expect(devbox([], io({}))).rejects.toThrow(
      new UsageError(
        "usage: clustercode devbox --api URL (--devbox ID [--token-stdin] | --warm ID --token-stdin) (without --token-stdin, a DevBox's token is in CLUSTERCODE_DEVBOX_TOKEN)",
      ),
    );
    await expect(devbox(["--api", "nope", "--devbox", "b"], io({}))).rejects.toThrow(
      '--api must be a URL, got "nope"',
    );
    await expect(
      devbox(["--api", "http://127.0.0.1:1", "--devbox", "b", "--token", "x"], io({})),
    ).rejects.toThrow("unknown option --token");
    await expect(devbox(["--api", "http://127.0.0.1:1", "--devbox", "b"], io({}))).rejects.toThrow(
      /^CLUSTERCODE_DEVBOX_TOKEN is not set; /,
    );
  });
});

describe("secret masking", () => {
  it("masks every form of each secret, the longest first, and leaves short values alone", () => {
    const mask = new SecretMask([
      "s3cret-token",
      "s3cret",
      "ab",
      undefined,
      "pem-line-one\npem-line-two\n",
    ]);
    expect(mask.text("token=s3cret-token and s3cret, s3cret; ab")).toBe(
      "token=*** and ***, ***; ab",
    );
    // A value with a trailing newline printed inline, and each line of a multi-line value.
    expect(mask.text("key: pem-line-one / pem-line-two")).toBe("key: *** / ***");
    expect(new SecretMask([undefined]).text("nothing to hide")).toBe("nothing to hide");
  });

  it("masks a secret split between chunks, holding back only what may start one", () => {
    const stream = new SecretMask(["s3cret-token"]).stream();
    const shown = [
      stream.write("one\ntoken=s3cr"),
      stream.write("et-token\ntwo s"),
      stream.write("3x"),
      stream.flush(),
    ];
    expect(shown).toEqual(["one\ntoken=", "***\ntwo ", "s3x", ""]);
  });
});
