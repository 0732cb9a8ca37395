import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  parseSetupCache,
  restoreSetupCache,
  saveSetupCache,
  type CacheContext,
  type SetupCacheSettings,
} from "../../../src/devbox/agent/setup-cache.js";
import { evictSetupCache, setupCacheDir } from "../../../src/devbox/local/setup-cache-dirs.js";

const SETUP = ["npm ci"];
let root: string;
let said: string[];

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "setup-cache-"));
  said = [];
});
afterEach(() => rm(root, { recursive: true, force: true }));

/** A checkout with a lockfile and, when `installed`, the node_modules setup would make. */
function checkout(name: string, lock = "v1", installed = false): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  // A checkout: the cache checks an entry against the files it tracks (here none).
  execFileSync("git", ["init", "--quiet", dir]);
  writeFileSync(join(dir, "package-lock.json"), lock);
  if (installed) {
    mkdirSync(join(dir, "node_modules", "left-pad"), { recursive: true });
    writeFileSync(
      join(dir, "node_modules", "left-pad", "index.js"),
      `module.exports = "${lock}";\n`,
    );
  }
  return dir;
}

function context(cwd: string): CacheContext {
  return {
    cwd,
    env: { PATH: process.env.PATH ?? "" },
    signal: new AbortController().signal,
    say: (line) => said.push(line),
  };
}

function cache(...dirs: string[]): SetupCacheSettings {
  for (const dir of dirs) mkdirSync(dir, { recursive: true });
  return { entries: [{ key: ["package-lock.json"], paths: ["node_modules"] }], dirs };
}

/** Setup on a fresh checkout: restore, "install" on a miss, save. */
async function setUp(cwd: string, settings: SetupCacheSettings, lock = "v1") {
  const restored = await restoreSetupCache(context(cwd), settings, SETUP);
  if (!restored.hits.every(Boolean)) checkout(cwd.slice(root.length + 1), lock, true);
  await saveSetupCache(context(cwd), settings, restored);
  return restored;
}

const installed = (cwd: string) =>
  readFileSync(join(cwd, "node_modules", "left-pad", "index.js"), "utf8");

describe("setup cache", () => {
  it("misses, saves after setup, and restores the same files on the next checkout", async () => {
    const settings = cache(join(root, "cache", "run"));
    expect((await setUp(checkout("a"), settings)).hits).toEqual([false]);
    const second = checkout("b");
    // What the paths held before is replaced, not merged.
    mkdirSync(join(second, "node_modules"));
    writeFileSync(join(second, "node_modules", "stale.js"), "old\n");
    expect((await setUp(second, settings)).hits).toEqual([true]);
    expect(installed(second)).toBe('module.exports = "v1";\n');
    expect(existsSync(join(second, "node_modules", "stale.js"))).toBe(false);
    expect(said.some((line) => line.startsWith("setup cache: restored node_modules"))).toBe(true);
  });

  it("misses when the lockfile or the setup commands change", async () => {
    const settings = cache(join(root, "cache", "run"));
    await setUp(checkout("a"), settings);
    expect((await setUp(checkout("b", "v2"), settings, "v2")).hits).toEqual([false]);
    const other = await restoreSetupCache(context(checkout("c")), settings, ["npm install"]);
    expect(other.hits).toEqual([false]);
  });

  it("restores the base branch's entry and saves only to the run branch's directory", async () => {
    const base = join(root, "cache", "main");
    await setUp(checkout("a"), cache(base));
    const run = join(root, "cache", "feature");
    const second = checkout("b");
    expect((await setUp(second, cache(run, base))).hits).toEqual([true]);
    expect(installed(second)).toContain("v1");
    expect(readdirSync(run)).toEqual([]);
  });

  it("ignores a damaged entry, clearing what it unpacked, and drops it", async () => {
    const dir = join(root, "cache", "run");
    const settings = cache(dir);
    await setUp(checkout("a"), settings);
    const archive = readdirSync(dir).find((name) => name.endsWith(".tar")) ?? "";
    const bytes = readFileSync(join(dir, archive));
    writeFileSync(join(dir, archive), bytes.subarray(0, bytes.length / 2));
    const second = checkout("b");
    // What was there before is replaced by the entry, or cleared when the entry is damaged.
    mkdirSync(join(second, "node_modules"));
    writeFileSync(join(second, "node_modules", "stale"), "x");
    const restored = await restoreSetupCache(context(second), settings, SETUP);
    expect(restored.hits).toEqual([false]);
    expect(existsSync(join(second, "node_modules"))).toBe(false);
    expect(said.some((line) => line.includes("is missing or damaged, ignored"))).toBe(true);
    expect(readdirSync(dir).filter((name) => name.endsWith(".sha256"))).toEqual([]);
    // The next successful setup saves a good entry again.
    await saveSetupCache(context(checkout("b", "v1", true)), settings, restored);
    expect((await restoreSetupCache(context(checkout("c")), settings, SETUP)).hits).toEqual([true]);
  });

  it("ignores an entry whose pointer names a file outside its directory", async () => {
    const dir = join(root, "cache", "run");
    const settings = cache(dir);
    const { keys } = await setUp(checkout("a"), settings);
    writeFileSync(join(dir, `${keys[0]}.sha256`), "0000  ../../etc/passwd\n");
    expect((await restoreSetupCache(context(checkout("b")), settings, SETUP)).hits).toEqual([
      false,
    ]);
  });

  it("evicts the least recently used archives down to the limit", async () => {
    const stateDir = join(root, "state");
    const old = setupCacheDir(stateDir, "https://github.com/octo/repo.git", "main");
    const fresh = setupCacheDir(stateDir, "https://github.com/octo/repo.git", "feature");
    await setUp(checkout("a", "old"), cache(old), "old");
    await setUp(checkout("b", "fresh"), cache(fresh), "fresh");
    const tarIn = (dir: string) => readdirSync(dir).filter((name) => name.endsWith(".tar"));
    const [oldTar] = tarIn(old);
    const yesterday = new Date(Date.now() - 86_400_000);
    utimesSync(join(old, oldTar ?? ""), yesterday, yesterday);
    const size = readFileSync(join(fresh, tarIn(fresh)[0] ?? "")).length;
    expect(await evictSetupCache(stateDir, size)).toBeGreaterThan(0);
    expect(tarIn(old)).toEqual([]);
    expect(tarIn(fresh)).toHaveLength(1);
    expect(await evictSetupCache(stateDir, 0)).toBe(size);
  });

  it("keeps the cache of each repository apart, named by owner and repository", () => {
    const stateDir = join(root, "state");
    const viaHub = "http://127.0.0.1:1/internal/devboxes/d1/git/octo/repo.git";
    expect(setupCacheDir(stateDir, viaHub, "main")).toBe(
      setupCacheDir(stateDir, "https://x:token@github.com/octo/repo.git", "main"),
    );
    expect(setupCacheDir(stateDir, viaHub, "main")).toContain(join("cache", "octo", "repo"));
    expect(setupCacheDir(stateDir, "/some/../path", "main")).toContain(join("cache", "local"));
  });

  it("refuses cache paths from the environment that leave the checkout", () => {
    const entry = (path: string) => JSON.stringify([{ key: ["a"], paths: [path] }]);
    expect(parseSetupCache(entry("../up"), [])).toBeInstanceOf(Error);
    expect(parseSetupCache(entry("/abs"), [])).toBeInstanceOf(Error);
    expect(parseSetupCache(entry("node_modules"), ["/c"])).toEqual({
      entries: [{ key: ["a"], paths: ["node_modules"] }],
      dirs: ["/c"],
    });
    expect(parseSetupCache(undefined, [])).toBeUndefined();
  });

  it("packs with tar, which the DevBox image must have", () => {
    expect(execFileSync("tar", ["--version"], { encoding: "utf8" })).toMatch(/tar/);
  });
});
