/**
 * `clustercode ui` declares the warm DevBoxes its repository's workflow files ask for at start
 * (see docs/warm-start.md), at the head of the checked-out branch a local run starts from.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { declareLocalWarm } from "../../src/cli/local-warm.js";
import { WarmDemand } from "../../src/devbox/warm-demand.js";

const root = realpathSync(mkdtempSync(join(tmpdir(), "clustercode-local-warm-")));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, { cwd, encoding: "utf8", stdio: "pipe" });

function repository(name: string, files: Record<string, string>): string {
  const dir = join(root, name);
  mkdirSync(join(dir, ".clustercode", "workflows"), { recursive: true });
  mkdirSync(join(dir, "src"));
  for (const [path, text] of Object.entries(files)) writeFileSync(join(dir, path), text);
  git(dir, "init", "--quiet", "--initial-branch=trunk");
  git(dir, "add", "-A");
  git(dir, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", "init");
  return dir;
}

const workflow = (name: string, devbox: string) => `version: 1
name: ${name}
on: { label: ${name} }
${devbox}
nodes:
  build: { kind: run, run: make }
`;

describe("the warm DevBoxes of a local repository", () => {
  it("are declared from its workflow files, at its checked-out branch, from any directory in it", async () => {
    const dir = repository("warm", {
      ".clustercode/workflow.yml": workflow("main", "devbox: { setup: [make], warm: 2 }"),
      ".clustercode/workflows/lint.yml": workflow("lint", "devbox: { setup: [lint] }"),
      ".clustercode/workflows/broken.yml": "version: 1\nname: [\n",
    });
    const demand = new WarmDemand();
    expect(await declareLocalWarm(demand, join(dir, "src"))).toBe(dir);
    expect(demand.declared(dir)).toEqual([
      { repo: dir, branch: "trunk", count: 2, setup: ["make"], secrets: [] },
    ]);
  });

  it("are none outside a repository or on a detached HEAD", async () => {
    const demand = new WarmDemand();
    const outside = mkdtempSync(join(root, "plain-"));
    expect(await declareLocalWarm(demand, outside)).toBeUndefined();
    const dir = repository("detached", {
      ".clustercode/workflow.yml": workflow("main", "devbox: { warm: 1 }"),
    });
    git(dir, "checkout", "--quiet", "--detach");
    expect(await declareLocalWarm(demand, dir)).toBeUndefined();
    expect(demand.declared(dir)).toEqual([]);
  });
});
