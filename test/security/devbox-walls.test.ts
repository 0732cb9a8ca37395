/**
 * An injected agent's attacks from inside a real local DevBox (the built agent in
 * `dist/cli/main.js`, under bubblewrap), each one a command the hub dispatches as a workflow
 * command would, and each refused by the DevBox's walls.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { CommandResult } from "../../src/engine/commands.js";
import type { DevBoxEvent } from "../../src/devbox/hub/events.js";
import { DevBoxHub } from "../../src/devbox/hub/hub.js";
import { LocalExecutor } from "../../src/devbox/local/executor.js";

const root = realpathSync(mkdtempSync(join(tmpdir(), "clustercode-walls-")));
const source = join(root, "source");
const stateDir = join(root, "state");
const privateKey = join(stateDir, "app.private-key.pem");
const KEY_TEXT = "-----BEGIN RSA PRIVATE KEY----- walls-canary-key";
const APP_CANARY = `app-canary-${process.pid}-x9`;
const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, { cwd, encoding: "utf8" });

beforeAll(() => {
  git(root, "init", "--quiet", "--initial-branch=main", source);
  writeFileSync(join(source, "README.md"), "# demo\n");
  git(source, "add", "README.md");
  git(source, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", "init");
  mkdirSync(stateDir, { recursive: true });
  writeFileSync(privateKey, KEY_TEXT, { mode: 0o600 });
  // What a provider key or WEBHOOK_SECRET in the app's environment stands for.
  process.env.WALLS_APP_CANARY = APP_CANARY;
});
afterAll(async () => {
  delete process.env.WALLS_APP_CANARY;
  await rm(root, { recursive: true, force: true });
});

class World {
  readonly events: DevBoxEvent[] = [];
  readonly hub = new DevBoxHub({ onEvent: (event) => this.events.push(event), lapseMs: 3000 });
  readonly tokens = new Map<string, string>();
  readonly executor: LocalExecutor;

  constructor(env: NodeJS.ProcessEnv = {}) {
    this.executor = new LocalExecutor({
      stateDir,
      graceMs: 2000,
      // As a host decodes them from its environment.
      sandbox: {
        unsafe: env.CLUSTERCODE_UNSAFE_LOCAL_DEVBOX === "1",
        bwrap: env.CLUSTERCODE_BWRAP,
      },
      env: {
        ...process.env,
        CLUSTERCODE_DEVBOX_HEARTBEAT_MS: "300",
        CLUSTERCODE_DEVBOX_LAPSE_MS: "3000",
        ...env,
      },
    });
  }

  async start(devboxId: string) {
    const apiUrl = await this.hub.listen();
    const { token } = this.hub.register({ devboxId, runId: "run5" });
    this.tokens.set(devboxId, token);
    await this.executor.start({
      devboxId,
      runId: "run5",
      apiUrl,
      token,
      repository: source,
      spec: { branch: "clustercode/5-1", baseBranch: "main", setup: [], secrets: [] },
    });
    return this.waitFor((event) => event.type === "devbox.ready" && event.devboxId === devboxId);
  }

  async run(devboxId: string, commandId: string, script: string): Promise<CommandResult> {
    this.hub.dispatch(devboxId, { commandId, command: { type: "script", script } });
    const event = await this.waitFor(
      (e) => e.type === "command.finished" && e.result.commandId === commandId,
    );
    if (event.type !== "command.finished") throw new Error("unreachable");
    return event.result;
  }

  async waitFor(predicate: (event: DevBoxEvent) => boolean) {
    for (let i = 0; i < 1000; i++) {
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

/** Every environment and command line of every process the command can see, as text. */
const DUMP_PROCESSES = [
  "for p in /proc/[0-9]*; do",
  '  tr "\\0" "\\n" < "$p/environ" 2>/dev/null || true',
  '  tr "\\0" " " < "$p/cmdline" 2>/dev/null || true; echo',
  "done",
].join("\n");

let world: World;
afterEach(() => world.dispose());

describe("a local DevBox's walls", () => {
  it("says it is isolated by bubblewrap when ready", async () => {
    world = new World();
    const ready = await world.start("run5-ready");
    expect(ready).toMatchObject({ ok: true, isolation: "bubblewrap" });
  });

  it("hides the app's environment, the agent's token and the other DevBoxes", async () => {
    world = new World();
    await world.start("run5-a");
    await world.start("run5-b");
    const result = await world.run(
      "run5-a",
      "c1",
      `${DUMP_PROCESSES}\ncat /proc/${process.pid}/environ 2>&1 || true`,
    );
    expect(result.output).not.toContain(APP_CANARY);
    expect(result.output).not.toContain(world.tokens.get("run5-a"));
    expect(result.output).not.toContain(world.tokens.get("run5-b"));
    // Neither its own agent nor the other DevBox's is among the processes it sees.
    expect(result.output).not.toContain("--devbox");
    expect(result.output).not.toContain("run5-b");
  });

  it("cannot post a result for its own gate command: no token is to be found", async () => {
    world = new World();
    await world.start("run5-gate");
    const attack = [
      "token=$(for p in /proc/[0-9]*; do tr '\\0' '\\n' < $p/environ 2>/dev/null; done |",
      "  sed -n 's/^CLUSTERCODE_DEVBOX_TOKEN=//p' | head -1)",
      'echo "found token: [${token}]"',
      'curl -s --noproxy "*" -X POST -H "Authorization: Bearer ${token}" \\',
      "  -H 'content-type: application/json' \\",
      `  --data '{"commandId":"gate","exitCode":0,"output":"forged","durationMs":1}' \\`,
      `  "http://127.0.0.1:${new URL(await world.hub.listen()).port}/internal/devboxes/run5-gate/results" || true`,
      "exit 3",
    ].join("\n");
    const result = await world.run("run5-gate", "gate", attack);
    expect(result.output).toContain("found token: []");
    expect(result.exitCode).toBe(3);
    const finished = world.events.filter(
      (e) => e.type === "command.finished" && e.result.commandId === "gate",
    );
    expect(finished).toHaveLength(1);
  });

  it("cannot read the app's private key or state directory by path", async () => {
    world = new World();
    await world.start("run5-files");
    const result = await world.run(
      "run5-files",
      "c1",
      `cat ${privateKey} 2>&1 || true; ls -a ${stateDir} | sed 's/^/listed: /' || true`,
    );
    expect(result.output).not.toContain(KEY_TEXT);
    expect(result.output).not.toContain("listed: app.private-key.pem");
  });

  it("cannot reach a TCP host on 127.0.0.1 outside its network namespace", async () => {
    world = new World();
    let connections = 0;
    const server: Server = createServer((socket) => {
      connections++;
      socket.end("hello from the host\n");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as { port: number };
    try {
      await world.start("run5-net");
      const result = await world.run(
        "run5-net",
        "c1",
        `(exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3 && echo connected) 2>&1 || echo refused`,
      );
      expect(result.output).toContain("refused");
      expect(result.output).not.toContain("hello from the host");
      expect(connections).toBe(0);
    } finally {
      server.close();
    }
  });

  it("records when a DevBox runs without isolation (CLUSTERCODE_UNSAFE_LOCAL_DEVBOX=1)", async () => {
    world = new World({ CLUSTERCODE_UNSAFE_LOCAL_DEVBOX: "1" });
    const ready = await world.start("run5-unsafe");
    expect(ready).toMatchObject({
      ok: true,
      isolation: "none (CLUSTERCODE_UNSAFE_LOCAL_DEVBOX=1)",
    });
  });

  it("refuses to start without bubblewrap, saying what is missing and how to fix it", async () => {
    world = new World({ CLUSTERCODE_BWRAP: join(root, "no-such-bwrap") });
    await expect(world.start("run5-nobwrap")).rejects.toThrow(
      /bwrap was not found.*install bubblewrap.*CLUSTERCODE_EXECUTOR=container.*CLUSTERCODE_UNSAFE_LOCAL_DEVBOX=1.*clustercode doctor/,
    );
    await world.dispose();
    world = new World({ PATH: join(root, "empty-bin") });
    await expect(world.start("run5-nopath")).rejects.toThrow(/bwrap was not found on PATH/);
  });
});
