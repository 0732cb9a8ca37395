import { execFile, execFileSync } from "node:child_process";
import { promisify } from "node:util";
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DevBoxHub } from "../../../src/devbox/hub/hub.js";
import { hubGitAuthEnv } from "../../../src/devbox/hub/git/git-auth.js";
import type { PushRefusal } from "../../../src/devbox/hub/git/git-service.js";
import { isolatedGitEnv } from "../../helpers/git-env.js";

const RUN_BRANCH = "clustercode/7-run1";
const SECRET = "s3cr3t-value-of-the-run";
const AWS_KEY = ["AKIA", "IOSFODNN7EXAMPLE"].join("");

let root: string;
let hub: DevBoxHub | undefined;
let refusals: PushRefusal[];

const gitEnv = (env: Record<string, string> = {}) => isolatedGitEnv(root, env);

/** Git that does not talk to the hub (which runs in this process) may block. */
function git(cwd: string, args: string[], env: Record<string, string> = {}): string {
  return execFileSync("git", args, { cwd, env: gitEnv(env), encoding: "utf8", stdio: "pipe" });
}

/** Runs git against the hub and returns its combined output and whether it succeeded. */
async function tryGit(cwd: string, args: string[], env: Record<string, string>) {
  try {
    const { stdout, stderr } = await promisify(execFile)("git", args, { cwd, env: gitEnv(env) });
    return { ok: true, output: `${stdout}${stderr}` };
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string };
    return { ok: false, output: `${failed.stdout ?? ""}${failed.stderr ?? ""}` };
  }
}

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "hub-git-"));
  refusals = [];
  // The stand-in for GitHub: a bare repository with main.
  const seed = join(root, "seed");
  mkdirSync(seed);
  git(seed, ["init", "--quiet", "--initial-branch=main"]);
  writeFileSync(join(seed, "README.md"), "hello\n");
  git(seed, ["add", "."]);
  git(seed, ["commit", "--quiet", "-m", "first"]);
  git(root, ["clone", "--quiet", "--bare", seed, join(root, "upstream.git")]);
});

afterEach(async () => {
  await hub?.close();
  hub = undefined;
  rmSync(root, { recursive: true, force: true });
});

async function setup(options: { allowWorkflowChanges?: boolean } = {}) {
  hub = new DevBoxHub({
    onEvent: (event) => {
      if (event.type === "push.refused") refusals.push(event);
    },
    git: {
      stateDir: join(root, "state"),
      upstreamOf: () => Promise.resolve({ url: join(root, "upstream.git"), env: {} }),
      policyOf: () =>
        Promise.resolve({
          runBranch: RUN_BRANCH,
          allowWorkflowChanges: options.allowWorkflowChanges ?? false,
        }),
    },
  });
  await hub.listen();
  const { token } = hub.register({ devboxId: "run1-box1", runId: "run1", secretValues: [SECRET] });
  const url = hub.gitUrl("run1-box1", "octo/repo");
  const auth = hubGitAuthEnv(token);
  const checkout = join(root, "checkout");
  expect((await tryGit(root, ["clone", "--quiet", url, checkout], auth)).ok).toBe(true);
  git(checkout, ["checkout", "--quiet", "-b", RUN_BRANCH]);
  return { auth, checkout, url };
}

function commitFile(checkout: string, path: string, text: string): void {
  mkdirSync(join(checkout, path, ".."), { recursive: true });
  writeFileSync(join(checkout, path), text);
  git(checkout, ["add", "--all"]);
  git(checkout, ["commit", "--quiet", "-m", `add ${path}`]);
}

const upstreamRefs = () => git(root, ["--git-dir", join(root, "upstream.git"), "show-ref"]);

describe("the hub's git route", () => {
  it("clones through the hub and pushes the run branch to the upstream", async () => {
    const { auth, checkout } = await setup();
    expect(git(checkout, ["log", "--format=%s"])).toContain("first");
    commitFile(checkout, "src/feature.ts", "export const x = 1;\n");
    const pushed = await tryGit(
      checkout,
      ["push", "origin", `HEAD:refs/heads/${RUN_BRANCH}`],
      auth,
    );
    expect(pushed.ok).toBe(true);
    const head = git(checkout, ["rev-parse", "HEAD"]).trim();
    expect(upstreamRefs()).toContain(`${head} refs/heads/${RUN_BRANCH}`);
    // Its variant branches are the run's too.
    const variant = await tryGit(
      checkout,
      ["push", "origin", `HEAD:refs/heads/${RUN_BRANCH}-v2`],
      auth,
    );
    expect(variant.ok).toBe(true);
    expect(refusals).toEqual([]);
  });

  it("refuses the default branch, tags and another run's branch", async () => {
    const { auth, checkout } = await setup();
    commitFile(checkout, "a.txt", "a\n");
    const before = upstreamRefs();
    const main = await tryGit(checkout, ["push", "origin", "HEAD:refs/heads/main"], auth);
    expect(main.ok).toBe(false);
    expect(main.output).toContain("only the run's branches");
    git(checkout, ["tag", "v1"]);
    const tag = await tryGit(checkout, ["push", "origin", "refs/tags/v1"], auth);
    expect(tag.ok).toBe(false);
    expect(tag.output).toContain("tags may not be pushed");
    const other = await tryGit(
      checkout,
      ["push", "origin", "HEAD:refs/heads/clustercode/8-run2"],
      auth,
    );
    expect(other.ok).toBe(false);
    expect(upstreamRefs()).toBe(before);
    expect(refusals.map((refusal) => refusal.ref)).toEqual([
      "refs/heads/main",
      "refs/tags/v1",
      "refs/heads/clustercode/8-run2",
    ]);
  });

  it("refuses and records a push carrying a run secret or a credential, without the value", async () => {
    const { auth, checkout } = await setup();
    commitFile(checkout, "config.txt", `token=${SECRET}\n`);
    const secret = await tryGit(
      checkout,
      ["push", "origin", `HEAD:refs/heads/${RUN_BRANCH}`],
      auth,
    );
    expect(secret.ok).toBe(false);
    expect(secret.output).toContain("secrets");
    git(checkout, ["reset", "--quiet", "--hard", "HEAD~1"]);
    commitFile(checkout, "aws.txt", `key=${AWS_KEY}\n`);
    const aws = await tryGit(checkout, ["push", "origin", `HEAD:refs/heads/${RUN_BRANCH}`], auth);
    expect(aws.ok).toBe(false);
    expect(aws.output).toContain("an AWS access key id");
    git(checkout, ["reset", "--quiet", "--hard", "HEAD~1"]);
    commitFile(checkout, "gh.txt", `token: ${["ghp", "_", "a".repeat(36)].join("")}\n`);
    const github = await tryGit(
      checkout,
      ["push", "origin", `HEAD:refs/heads/${RUN_BRANCH}`],
      auth,
    );
    expect(github.ok).toBe(false);
    expect(github.output).toContain("a GitHub token");
    expect(upstreamRefs()).not.toContain(RUN_BRANCH);
    expect(refusals).toHaveLength(3);
    expect(JSON.stringify(refusals)).not.toContain(SECRET);
    expect(JSON.stringify(refusals)).not.toContain(AWS_KEY);
  });

  it("refuses changes to .github/workflows/ unless the workflow opts in", async () => {
    const refused = await setup();
    commitFile(refused.checkout, ".github/workflows/ci.yml", "on: push\n");
    const push = ["push", "origin", `HEAD:refs/heads/${RUN_BRANCH}`];
    const first = await tryGit(refused.checkout, push, refused.auth);
    expect(first.ok).toBe(false);
    expect(first.output).toContain("allow_workflow_changes");
    await hub?.close();
    rmSync(refused.checkout, { recursive: true, force: true });
    const allowed = await setup({ allowWorkflowChanges: true });
    commitFile(allowed.checkout, ".github/workflows/ci.yml", "on: push\n");
    expect((await tryGit(allowed.checkout, push, allowed.auth)).ok).toBe(true);
  });

  it("answers 401 to git without the DevBox's hub token", async () => {
    const { url, auth } = await setup();
    const cloned = await tryGit(root, ["clone", "--quiet", url, join(root, "stranger")], {});
    expect(cloned.ok).toBe(false);
    const response = await fetch(`${url}/info/refs?service=git-upload-pack`);
    expect(response.status).toBe(401);
    // Nor with the token of a DevBox that was released.
    hub?.release("run1-box1");
    const late = await tryGit(root, ["clone", "--quiet", url, join(root, "late")], auth);
    expect(late.ok).toBe(false);
  });
});
