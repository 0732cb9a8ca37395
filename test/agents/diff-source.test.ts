import { execFileSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bound, GitDiffSource } from "../../src/agents/diff-source.js";

let repo: string;
const git = (...args: string[]) =>
  execFileSync("git", ["-C", repo, ...args], {
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "t",
      GIT_AUTHOR_EMAIL: "t@t",
      GIT_COMMITTER_NAME: "t",
      GIT_COMMITTER_EMAIL: "t@t",
    },
  });

beforeAll(async () => {
  repo = await mkdtemp(join(tmpdir(), "clustercode-diff-"));
  git("init", "--quiet", "--initial-branch=main");
  await writeFile(join(repo, "page.ts"), "return items.slice(0, n - 1)\n");
  git("add", ".");
  git("commit", "--quiet", "-m", "base");
  git("checkout", "--quiet", "-b", "clustercode/1-r1");
  await writeFile(join(repo, "page.ts"), "return items.slice(0, n)\n");
  git("commit", "--quiet", "-am", "fix");
  git("checkout", "--quiet", "main");
  // main moves on after the branch: base...head shows only the branch's own change.
  await writeFile(join(repo, "other.ts"), "export {};\n");
  git("add", ".");
  git("commit", "--quiet", "-m", "unrelated");
});
afterAll(async () => {
  await rm(repo, { recursive: true, force: true });
});

describe("GitDiffSource", () => {
  it("diffs the branch against its merge base in a local repository", async () => {
    const diff = await new GitDiffSource().diff({
      repository: repo,
      base: "main",
      head: "clustercode/1-r1",
    });
    expect(diff).toContain("-return items.slice(0, n - 1)\n+return items.slice(0, n)");
    expect(diff).not.toContain("other.ts");
  });

  it("fetches the two branches into a scratch repository for a URL", async () => {
    const url = pathToFileURL(repo).href;
    const diff = await new GitDiffSource().diff({
      repository: url,
      base: "main",
      head: "clustercode/1-r1",
    });
    expect(diff).toContain("+return items.slice(0, n)");
  });

  it("rejects a branch that does not exist, saying which", async () => {
    await expect(
      new GitDiffSource().diff({ repository: repo, base: "main", head: "--output=/tmp/x" }),
    ).rejects.toThrow(/git diff .* failed/);
  });

  it("bounds a long diff and says how much was cut", () => {
    const text = Array.from({ length: 100 }, (_, i) => `+line ${i}`).join("\n");
    const cut = bound(text, 200);
    expect(Buffer.byteLength(cut)).toBeLessThan(260);
    expect(cut).toMatch(/\[diff cut: \d+ more bytes not shown\]\n$/);
    expect(bound("short", 200)).toBe("short");
  });
});
