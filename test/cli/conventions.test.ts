import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { COMMANDS } from "../../src/cli/command-table.js";
import { runCli, tempDir } from "./helpers.js";

const VERSION = (
  JSON.parse(readFileSync(join(import.meta.dirname, "../../package.json"), "utf8")) as {
    version: string;
  }
).version;
const MINIMAL = readFileSync(
  join(import.meta.dirname, "../../workflows-schema/examples/minimal.yml"),
  "utf8",
);

describe("clustercode conventions", () => {
  it("--version prints the package version", async () => {
    const result = await runCli(["--version"]);
    expect(result).toEqual({ code: 0, stdout: `clustercode ${VERSION}\n`, stderr: "" });
  });

  it.each(
    Object.keys(COMMANDS).flatMap((name) => [
      [name, "--help"],
      [name, "-h"],
    ]),
  )("%s %s prints that command's usage and exits 0", async (name, flag) => {
    const result = await runCli([name, flag]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.startsWith(`Usage: clustercode ${name}`)).toBe(true);
    expect(result.stderr).toBe("");
  });

  it("help RUN is run --help; the overview lists every command and the exit codes", async () => {
    expect((await runCli(["help", "run"])).stdout).toBe((await runCli(["run", "--help"])).stdout);
    const overview = await runCli(["--help"]);
    expect(overview.code).toBe(0);
    for (const name of Object.keys(COMMANDS)) expect(overview.stdout).toContain(`  ${name}`);
    expect(overview.stdout).toContain("4 nothing to do");
  });

  it("an unknown command is one line with a suggestion and a pointer to --help", async () => {
    expect(await runCli(["rnu"])).toEqual({
      code: 2,
      stdout: "",
      stderr: `clustercode: unknown command "rnu": did you mean "run"? See 'clustercode --help'.\n`,
    });
    expect((await runCli(["frobnicate"])).stderr).toBe(
      `clustercode: unknown command "frobnicate". See 'clustercode --help'.\n`,
    );
  });

  it("an unknown option names it and points to the command's --help", async () => {
    const result = await runCli(["run", "--bogus"]);
    expect(result).toMatchObject({ code: 2, stdout: "" });
    expect(result.stderr).toBe(
      "clustercode run: unknown option --bogus (see 'clustercode run --help')\n",
    );
  });

  it("a state directory that cannot be used is one line naming it", async () => {
    const dir = await tempDir({ "not-a-dir": "x" });
    const file = join(dir, "not-a-dir");
    for (const args of [
      ["status", "--state-dir", file],
      ["log", "r1", "--state-dir", file],
      ["approve", "r1", "--state-dir", file],
    ]) {
      const result = await runCli(args);
      expect(result.code).toBe(2);
      expect(result.stderr).toBe(
        `clustercode ${args[0]}: cannot use the state directory ${file}: it exists and is not a directory (choose another with --state-dir or CLUSTERCODE_STATE_DIR)\n`,
      );
    }
  });

  it("an unknown run is 'nothing to do' (exit 4), naming the state directory", async () => {
    const state = join(await tempDir(), "state");
    const result = await runCli(["status", "r-none", "--state-dir", state]);
    expect(result).toMatchObject({ code: 4, stdout: "" });
    expect(result.stderr).toBe(`clustercode status: no run r-none in ${state}\n`);
  });

  it("an unreadable input says why in words, not errno codes", async () => {
    const dir = await tempDir({ ".clustercode/workflow.yml": MINIMAL });
    const asDirectory = await runCli(["validate", ".clustercode"], { cwd: dir });
    expect(asDirectory.stderr).toBe(
      "clustercode validate: cannot read .clustercode: it is a directory\n",
    );
    const missing = await runCli(["graph", "nope.yml"], { cwd: dir });
    expect(missing).toMatchObject({ code: 2 });
    expect(missing.stderr).toBe(
      "clustercode graph: cannot read nope.yml: no such file or directory\n",
    );
  });
});

describe("clustercode validate in a repository", () => {
  it("finds the repository's .clustercode/ from a subdirectory", async () => {
    const repo = await tempDir({
      ".clustercode/workflow.yml": MINIMAL,
      ".clustercode/workflows/broken.yml": MINIMAL.replace("kind: run", "kind: rnu"),
      "src/deep/file.txt": "",
    });
    execFileSync("git", ["init", "-q", repo]);
    const result = await runCli(["validate"], { cwd: join(repo, "src/deep") });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(
      /^\.\.\/\.\.\/\.clustercode\/workflows\/broken\.yml:\d+:\d+ {2}error/,
    );
    expect(result.stderr).toBe("2 files checked: 1 error, 0 warnings\n");
  });

  it("stops at the repository's root", async () => {
    const outer = await tempDir({ ".clustercode/workflow.yml": MINIMAL });
    const repo = join(outer, "inner");
    execFileSync("git", ["init", "-q", repo]);
    writeFileSync(join(repo, "README.md"), "");
    const result = await runCli(["validate"], { cwd: repo });
    expect(result).toMatchObject({ code: 2, stdout: "" });
    expect(result.stderr).toBe(
      "clustercode validate: no workflow found: pass a file, or run inside a repository with .clustercode/workflow.yml (clustercode init writes one)\n",
    );
  });
});
