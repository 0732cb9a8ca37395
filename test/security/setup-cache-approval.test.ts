/**
 * The setup cache must not carry code past an approval: a node's command that rewrites its run
 * branch's cache entry with an archive holding a tracked file (`deploy.sh`) would have the next
 * DevBox of the branch restore it and run code nobody approved. Product defaults: bubblewrap, a
 * real hub, the built agent.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { CommandResult, DevBoxSpec } from "../../src/engine/commands.js";
import type { DevBoxEvent } from "../../src/devbox/hub/events.js";
import { DevBoxHub } from "../../src/devbox/hub/hub.js";
import { LocalExecutor } from "../../src/devbox/local/executor.js";
import { setupCacheDir } from "../../src/devbox/local/setup-cache-dirs.js";
import { fileSha256, setupCacheKey } from "../../src/devbox/agent/setup-cache.js";
import { archiveName, pointerName, pointerText } from "../../src/devbox/setup-cache-layout.js";

const root = realpathSync(mkdtempSync(join(tmpdir(), "clustercode-cache-approval-")));
const source = join(root, "source");
const APPROVED = "echo approved\n";
const BRANCH = "clustercode/5-1";
const ENTRY = { key: ["package-lock.json"], paths: ["node_modules"] };
const SETUP = ["mkdir -p node_modules && echo dep > node_modules/dep.js"];
const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, { cwd, encoding: "utf8" });

beforeAll(() => {
  git(root, "init", "--quiet", "--initial-branch=main", source);
  writeFileSync(join(source, "deploy.sh"), APPROVED);
  writeFileSync(join(source, "package-lock.json"), "{}\n");
  git(source, "add", ".");
  git(source, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", "init");
});
afterAll(() => rm(root, { recursive: true, force: true }));

class World {
  readonly events: DevBoxEvent[] = [];
  readonly stateDir = mkdtempSync(join(root, "state-"));
  readonly hub = new DevBoxHub({ onEvent: (event) => this.events.push(event), lapseMs: 3000 });
  readonly executor = new LocalExecutor({
    stateDir: this.stateDir,
    graceMs: 2000,
    env: { ...process.env, CLUSTERCODE_DEVBOX_HEARTBEAT_MS: "300" },
  });

  /** The run branch's cache directory on the host. */
  get cacheDir(): string {
    return setupCacheDir(this.stateDir, source, BRANCH);
  }

  async start(devboxId: string) {
    const apiUrl = await this.hub.listen();
    const { token } = this.hub.register({ devboxId, runId: "run5" });
    const spec: DevBoxSpec = {
      ...{ branch: BRANCH, baseBranch: "main", setup: SETUP, secrets: [] },
      cache: [ENTRY],
    };
    await this.executor.start({ devboxId, runId: "run5", apiUrl, token, repository: source, spec });
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

  file(devboxId: string, name: string): string {
    return readFileSync(join(this.executor.paths(devboxId).checkout, name), "utf8");
  }

  log(devboxId: string): string {
    return readFileSync(this.executor.paths(devboxId).logFile, "utf8");
  }

  async dispose() {
    await this.executor.stopAll();
    await this.hub.close();
  }
}

/** Rewrites the entry in `dir` with an archive of node_modules and a `deploy.sh` of its own. */
const REWRITE_ENTRY = (dir: string) =>
  [
    `cd ${dir}`,
    "pointer=$(ls *.sha256 | head -1); key=${pointer%.sha256}",
    "mkdir -p $TMPDIR/evil/node_modules && echo evil > $TMPDIR/evil/node_modules/dep.js",
    "echo 'echo not approved' > $TMPDIR/evil/deploy.sh",
    "tar -cf $TMPDIR/evil.tar -C $TMPDIR/evil node_modules deploy.sh",
    "sha=$(sha256sum $TMPDIR/evil.tar | cut -d' ' -f1); name=$key-$(echo $sha | cut -c1-16).tar",
    'cp $TMPDIR/evil.tar "$name" && echo "$sha  $name" > "$pointer" && echo planted',
  ].join("\n");

let world: World;
afterEach(() => world.dispose());

describe("the setup cache and approvals", () => {
  it("a node's command cannot rewrite its branch's entry; the next DevBox restores the setup's", async () => {
    world = new World();
    expect(await world.start("run5-a")).toMatchObject({ ok: true });
    expect(world.log("run5-a")).toContain("setup cache: saved node_modules");
    const attack = await world.run("run5-a", "c1", `${REWRITE_ENTRY(world.cacheDir)} 2>&1 || true`);
    expect(attack.output).not.toContain("planted");

    expect(await world.start("run5-b")).toMatchObject({ ok: true });
    expect(world.file("run5-b", "deploy.sh")).toBe(APPROVED);
    // The honest entry, saved after the setup, is what the next DevBox got.
    expect(world.log("run5-b")).toContain("setup cache: restored node_modules");
    expect(world.file("run5-b", "node_modules/dep.js")).toBe("dep\n");
  });

  it("an entry that holds a tracked file is refused, however it got there", async () => {
    world = new World();
    // The entry as anyone with the cache's directory could write it.
    const evil = join(root, "evil");
    mkdirSync(join(evil, "node_modules"), { recursive: true });
    writeFileSync(join(evil, "node_modules", "dep.js"), "evil\n");
    writeFileSync(join(evil, "deploy.sh"), "echo not approved\n");
    mkdirSync(world.cacheDir, { recursive: true });
    const archive = join(world.cacheDir, "planted.tar");
    execFileSync("tar", ["-cf", archive, "-C", evil, "node_modules", "deploy.sh"]);
    const key = await setupCacheKey(source, ENTRY, SETUP);
    const sha = await fileSha256(archive);
    execFileSync("mv", [archive, join(world.cacheDir, archiveName(key, sha))]);
    writeFileSync(join(world.cacheDir, pointerName(key)), pointerText(sha, archiveName(key, sha)));

    expect(await world.start("run5-c")).toMatchObject({ ok: true });
    expect(world.file("run5-c", "deploy.sh")).toBe(APPROVED);
    expect(world.log("run5-c")).toContain("deploy.sh is not under node_modules");
    // A miss: the setup ran and made node_modules itself.
    expect(world.file("run5-c", "node_modules/dep.js")).toBe("dep\n");
  });
});
