import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cliEnv, makeRepo, runCli, summaryOf } from "./local-cli.js";

const NO_NETWORK = join(import.meta.dirname, "fixtures/no-network.js");

/** No API key in sight, and every Node process refusing to leave the machine. */
function offline(root: string): { env: NodeJS.ProcessEnv; attempts: () => string } {
  const log = join(root, "network-attempts.log");
  writeFileSync(log, "");
  return {
    env: cliEnv({
      NODE_OPTIONS: `--import ${NO_NETWORK}`,
      CLUSTERCODE_TEST_NET_LOG: log,
    }),
    attempts: () => readFileSync(log, "utf8"),
  };
}

describe("clustercode init, then run", () => {
  it("writes a workflow that runs offline with no key to its approval; approve ends it done", async () => {
    const { repo, state, root } = makeRepo();
    const { env, attempts } = offline(root);
    expect(Object.keys(env).filter((name) => /KEY|TOKEN/.test(name))).toEqual([]);

    const init = await runCli(["init"], { cwd: repo, env });
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toContain("wrote .clustercode/workflow.yml");
    const written = readFileSync(join(repo, ".clustercode/workflow.yml"), "utf8");
    expect(written).toMatch(/kind: run/);
    expect(written).toMatch(/kind: loop[\s\S]*gates:/);
    expect(written).toMatch(/kind: approval/);
    expect(written).not.toContain("yaml-language-server");

    const validate = await runCli(["validate"], { cwd: repo, env });
    expect(validate.stderr).toBe("1 file checked: 0 errors, 0 warnings\n");

    const args = ["--state-dir", state, "--format", "json"];
    const run = await runCli(["run", ...args], { cwd: repo, env });
    expect(run.code, run.stderr).toBe(3);
    const waiting = summaryOf(run);
    expect(waiting.visits.map((visit) => `${visit.node}:${visit.outcome}`)).toEqual([
      "survey:succeeded",
      "notes:succeeded",
      "review:null",
    ]);

    const approve = await runCli(["approve", waiting.run, ...args], { cwd: repo, env });
    expect(approve.code, approve.stderr).toBe(0);
    expect(summaryOf(approve).status).toBe("succeeded");
    const notes = execFileSync("git", ["show", `${waiting.branch}:NOTES.md`], { cwd: repo });
    expect(notes.toString()).toContain("Write NOTES.md about the files listed in FILES.txt.");
    expect(attempts()).toBe("");
  }, 120_000);

  it("refuses to overwrite an existing workflow (exit 4), leaving it as it was", async () => {
    const { repo } = makeRepo();
    execFileSync("mkdir", ["-p", join(repo, ".clustercode")]);
    writeFileSync(join(repo, ".clustercode/workflow.yml"), "# mine\n");
    const result = await runCli(["init"], { cwd: join(repo, ".clustercode") });
    expect(result).toMatchObject({ code: 4, stdout: "" });
    expect(result.stderr).toBe(
      "clustercode init: workflow.yml already exists; init never overwrites a workflow: edit it, or move it away and run init again\n",
    );
    expect(readFileSync(join(repo, ".clustercode/workflow.yml"), "utf8")).toBe("# mine\n");
  });

  it("needs a git repository, and run needs a first commit", async () => {
    const bare = mkdtempSync(join(tmpdir(), "clustercode-init-"));
    const outside = await runCli(["init"], { cwd: bare });
    expect(outside.code).toBe(2);
    expect(outside.stderr).toBe(
      `clustercode init: ${bare} is not inside a git repository: runs work on one (git init, then clustercode init)\n`,
    );
    expect(existsSync(join(bare, ".clustercode"))).toBe(false);

    execFileSync("git", ["init", "-q", "-b", "main", bare]);
    expect((await runCli(["init"], { cwd: bare })).code).toBe(0);
    const run = await runCli(["run", "--state-dir", join(bare, ".state")], { cwd: bare });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      `clustercode run: ${bare} has no commits yet: a run starts from a commit (git add -A && git commit -m "first commit")\n`,
    );
  });
});
