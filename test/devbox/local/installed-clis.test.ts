/**
 * The pinned agent CLIs installed as users install them, outside every directory a local
 * DevBox's sandbox shows by default, each found and run by a real sandboxed DevBox (bubblewrap,
 * the product's defaults): by `npm install -g` under a prefix, by the native installer (a link
 * in one directory, the versions in another), under an nvm node prefix. The PATH the DevBox gets
 * has the install's `bin` first and not the project's node_modules/.bin, so the CLI is only
 * there through what the sandbox binds for it. A CLI that is not installed fails the claim.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { CommandResult } from "../../../src/engine/commands.js";
import type { DevBoxEvent } from "../../../src/devbox/hub/events.js";
import { DevBoxHub } from "../../../src/devbox/hub/hub.js";
import { LocalExecutor } from "../../../src/devbox/local/executor.js";

const MODULES = realpathSync(join(import.meta.dirname, "..", "..", "..", "node_modules"));
const root = realpathSync(mkdtempSync(join(tmpdir(), "clustercode-clis-")));
const source = join(root, "source");
const stateDir = join(root, "state");
const NODE = realpathSync(process.execPath);
const SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
const CLAUDE = "@anthropic-ai/claude-code";
const CODEX = "@openai/codex";
const CODEX_PLATFORM = `@openai/codex-linux-${process.arch === "arm64" ? "arm64" : "x64"}`;
const pinned = (
  JSON.parse(execFileSync("cat", [join(MODULES, "..", "package.json")], { encoding: "utf8" })) as {
    devDependencies: Record<string, string>;
  }
).devDependencies;
const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, { cwd, encoding: "utf8" });

/** Copies `from` to `to` as hard links where the file system allows (the CLIs are large). */
function copyTree(from: string, to: string): void {
  mkdirSync(dirname(to), { recursive: true });
  try {
    execFileSync("cp", ["-al", from, to], { stdio: "pipe" });
  } catch {
    execFileSync("cp", ["-a", from, to], { stdio: "pipe" });
  }
}

/** Installs the pinned CLIs into `<prefix>/lib/node_modules` with their links in `<prefix>/bin`, as `npm install -g` does. */
function npmGlobal(prefix: string): void {
  const modules = join(prefix, "lib", "node_modules");
  copyTree(join(MODULES, CLAUDE), join(modules, CLAUDE));
  copyTree(join(MODULES, CODEX), join(modules, CODEX));
  // npm nests a global package's dependencies inside it.
  copyTree(join(MODULES, CODEX_PLATFORM), join(modules, CODEX, "node_modules", CODEX_PLATFORM));
  mkdirSync(join(prefix, "bin"), { recursive: true });
  symlinkSync(`../lib/node_modules/${CLAUDE}/bin/claude.exe`, join(prefix, "bin", "claude"));
  symlinkSync(`../lib/node_modules/${CODEX}/bin/codex.js`, join(prefix, "bin", "codex"));
}

beforeAll(() => {
  git(root, "init", "--quiet", "--initial-branch=main", source);
  writeFileSync(join(source, "README.md"), "# demo\n");
  git(source, "add", "README.md");
  git(source, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", "init");
  mkdirSync(stateDir, { recursive: true });
});
afterAll(() => rm(root, { recursive: true, force: true }));

class World {
  readonly events: DevBoxEvent[] = [];
  readonly hub = new DevBoxHub({ onEvent: (event) => this.events.push(event), lapseMs: 5000 });
  readonly executor: LocalExecutor;

  constructor(path: string) {
    this.executor = new LocalExecutor({
      stateDir,
      graceMs: 2000,
      env: {
        PATH: path,
        HOME: join(root, "host-home"),
        CLUSTERCODE_DEVBOX_HEARTBEAT_MS: "300",
        CLUSTERCODE_DEVBOX_LAPSE_MS: "5000",
      },
    });
  }

  /** Starts a DevBox whose run starts `harnesses`; its ready event. */
  async start(devboxId: string, harnesses: string[]) {
    const apiUrl = await this.hub.listen();
    const { token } = this.hub.register({ devboxId, runId: "run9" });
    await this.executor.start({
      devboxId,
      runId: "run9",
      apiUrl,
      token,
      repository: source,
      spec: { branch: "clustercode/9-1", baseBranch: "main", setup: [], secrets: [], harnesses },
    });
    return this.waitFor((event) => event.type === "devbox.ready" && event.devboxId === devboxId);
  }

  /** Runs `argv` as an engine command runs: without a shell, in the command sandbox. */
  async agent(devboxId: string, commandId: string, argv: string[]): Promise<CommandResult> {
    this.hub.dispatch(devboxId, { commandId, command: { type: "agent", argv, prompt: "-" } });
    const event = await this.waitFor(
      (e) => e.type === "command.finished" && e.result.commandId === commandId,
    );
    if (event.type !== "command.finished") throw new Error("unreachable");
    return event.result;
  }

  async waitFor(predicate: (event: DevBoxEvent) => boolean) {
    for (let i = 0; i < 1500; i++) {
      const found = this.events.find(predicate);
      if (found !== undefined) return found;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`no such event in ${JSON.stringify(this.events)}`);
  }

  async dispose() {
    await this.executor.stopAll();
    await this.hub.close();
  }
}

const CLAUDE_VERSION = `${pinned[CLAUDE]} (Claude Code)`;
const CODEX_VERSION = `codex-cli ${pinned[CODEX]}`;

let world: World | undefined;
afterEach(async () => {
  await world?.dispose();
  world = undefined;
});

describe("agent CLIs installed as users install them, run in a sandboxed DevBox", () => {
  it("by npm install -g under a prefix: claude and codex (through the node on PATH)", async () => {
    const prefix = join(root, "npm-global");
    npmGlobal(prefix);
    world = new World(`${join(prefix, "bin")}:${dirname(NODE)}:${SYSTEM_PATH}`);
    const ready = await world.start("run9-npm", ["claude", "codex"]);
    expect(ready).toMatchObject({
      ok: true,
      isolation: "bubblewrap",
      harness: { claude: CLAUDE_VERSION, codex: CODEX_VERSION },
    });
    const result = await world.agent("run9-npm", "c1", ["claude", "--version"]);
    expect(result).toMatchObject({ exitCode: 0 });
    expect(result.output).toContain(CLAUDE_VERSION);
  });

  it("by the native installer: a link in ~/.local/bin to a version in ~/.local/share", async () => {
    const home = join(root, "native-home");
    const version = join(home, ".local", "share", "claude", "versions", pinned[CLAUDE] ?? "");
    copyTree(join(MODULES, CLAUDE, "bin", "claude.exe"), version);
    mkdirSync(join(home, ".local", "bin"), { recursive: true });
    symlinkSync(version, join(home, ".local", "bin", "claude"));
    world = new World(`${join(home, ".local", "bin")}:${SYSTEM_PATH}`);
    const ready = await world.start("run9-native", ["claude"]);
    expect(ready).toMatchObject({ ok: true, harness: { claude: CLAUDE_VERSION } });
    const result = await world.agent("run9-native", "c1", ["claude", "--version"]);
    expect(result).toMatchObject({ exitCode: 0 });
    expect(result.output).toContain(CLAUDE_VERSION);
  });

  it("under an nvm node prefix whose node is a link to a node elsewhere", async () => {
    // nvm's layout; its node a link to a build outside every bound directory.
    const prefix = join(root, ".nvm", "versions", "node", "v22.0.0");
    npmGlobal(prefix);
    copyTree(NODE, join(root, "node-build", "bin", "node"));
    symlinkSync(join(root, "node-build", "bin", "node"), join(prefix, "bin", "node"));
    world = new World(`${join(prefix, "bin")}:${SYSTEM_PATH}`);
    const ready = await world.start("run9-nvm", ["codex", "claude"]);
    expect(ready).toMatchObject({
      ok: true,
      harness: { claude: CLAUDE_VERSION, codex: CODEX_VERSION },
    });
    const result = await world.agent("run9-nvm", "c1", ["codex", "--version"]);
    expect(result).toMatchObject({ exitCode: 0 });
    expect(result.output).toContain(CODEX_VERSION);
  });

  it("refuses the claim of a DevBox whose agent CLI is not installed, naming it and the PATH", async () => {
    const empty = join(root, "empty-bin");
    mkdirSync(empty, { recursive: true });
    world = new World(`${empty}:${SYSTEM_PATH}`);
    await expect(world.start("run9-missing", ["no-such-agent-cli"])).rejects.toThrow(
      `agent CLI "no-such-agent-cli" was not found on this host's PATH (searched PATH: ${empty}:${SYSTEM_PATH})`,
    );
  });
});
