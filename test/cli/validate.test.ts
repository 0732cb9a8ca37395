import { readFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { afterAll, describe, expect, it } from "vitest";
import { LIFECYCLE, runCli, tempDir } from "./helpers.js";

const AS_SHIPPED = readFileSync(LIFECYCLE, "utf8");
// The lifecycle with its engines' keys listed, so that it has no finding at all.
const VALID = AS_SHIPPED.replace(
  "secrets: [NPM_TOKEN]",
  "secrets: [NPM_TOKEN, ANTHROPIC_API_KEY, OPENAI_API_KEY]",
);
const WARNING_ONLY = `version: 1
name: retry
on: { label: go }
nodes:
  build: { kind: run, run: make }
  check: { kind: run, run: make check }
edges:
  - { from: build, to: check }
  - { from: check, to: build, back: true, max_traversals: 2 }
`;
const BROKEN = `version: 1
name: broken
on: { label: go }
nodes:
  build: { kind: run, run: make, timout: 1h }
edges:
  - { from: build, to: chekc }
`;

const containing = (text: string): unknown => expect.stringContaining(text);

const dirs: string[] = [];
async function workspace(files: Record<string, string>): Promise<string> {
  const dir = await tempDir(files);
  dirs.push(dir);
  return dir;
}
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

describe("clustercode validate", () => {
  it("exits 0 on a valid workflow, printing only the summary", async () => {
    const cwd = await workspace({ "flow.yml": VALID });
    const result = await runCli(["validate", "flow.yml"], { cwd });
    expect(result).toEqual({
      code: 0,
      stdout: "",
      stderr: "1 file checked: 0 errors, 0 warnings\n",
    });
  });

  it("accepts an absolute path", async () => {
    const result = await runCli(["validate", LIFECYCLE]);
    expect(result.code).toBe(0);
  });

  it("exits 0 with warnings only, printing them as FILE:LINE:COL  warning  MESSAGE  [rule]", async () => {
    const cwd = await workspace({ "retry.yml": WARNING_ONLY });
    const result = await runCli(["validate", "retry.yml"], { cwd });
    expect(result.code).toBe(0);
    expect(result.stdout.split("\n")[0]).toBe(
      "retry.yml:9:5  warning  after 2 traversals of this back-edge the run fails with back-edge-exhausted: add { from: check, to: escalated, label: exhausted } to give up deliberately  [no-give-up-branch]",
    );
    expect(result.stderr).toBe("1 file checked: 0 errors, 1 warning\n");
  });

  it("warns once per built-in engine whose key devbox.secrets does not list, naming the key", async () => {
    const cwd = await workspace({ "flow.yml": AS_SHIPPED });
    const result = await runCli(["validate", "flow.yml"], { cwd });
    expect(result.code).toBe(0);
    expect(result.stdout.split("\n").filter((line) => line.startsWith("flow.yml:"))).toEqual([
      "flow.yml:18:22  warning  engine claude needs ANTHROPIC_API_KEY (or one of ANTHROPIC_AUTH_TOKEN, CLAUDE_CODE_OAUTH_TOKEN, CLAUDE_CODE_USE_BEDROCK, CLAUDE_CODE_USE_VERTEX) in the DevBox, and devbox.secrets lists none: add ANTHROPIC_API_KEY to devbox.secrets, or its turns fail before the agent starts  [engine-without-key]",
      "flow.yml:25:19  warning  engine codex needs OPENAI_API_KEY in the DevBox, and devbox.secrets lists none: add OPENAI_API_KEY to devbox.secrets, or its turns fail before the agent starts  [engine-without-key]",
    ]);
    expect(result.stderr).toBe("1 file checked: 0 errors, 2 warnings\n");
  });

  it("exits 1 on errors, one finding per line in file order, each under its source with a caret", async () => {
    const cwd = await workspace({ "broken.yml": BROKEN });
    const result = await runCli(["validate", "broken.yml"], { cwd });
    expect(result.code).toBe(1);
    expect(result.stdout.split("\n")).toEqual([
      'broken.yml:5:34  error  unknown key "timout" in nodes.build: did you mean "timeout"?  [schema]',
      "  4 | nodes:",
      "> 5 |   build: { kind: run, run: make, timout: 1h }",
      "    |                                  ^",
      "  6 | edges:",
      "",
      'broken.yml:7:24  error  "chekc" is neither a node nor a terminal: use a node id or one of done, failed, escalated  [unknown-node]',
      "  6 | edges:",
      "> 7 |   - { from: build, to: chekc }",
      "    |                        ^",
      "",
      "",
    ]);
    expect(result.stderr).toBe("1 file checked: 2 errors, 0 warnings\n");
  });

  it("--format json prints every file with its findings", async () => {
    const cwd = await workspace({
      "ok.yml": VALID,
      "broken.yml": BROKEN,
      "retry.yml": WARNING_ONLY,
    });
    const result = await runCli(
      ["validate", "--format", "json", "ok.yml", "broken.yml", "retry.yml"],
      {
        cwd,
      },
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toBe("");
    const report = JSON.parse(result.stdout) as unknown;
    expect(report).toEqual({
      files: [
        { file: "ok.yml", valid: true, findings: [] },
        {
          file: "broken.yml",
          valid: false,
          findings: [
            {
              rule: "schema",
              severity: "error",
              message: 'unknown key "timout" in nodes.build: did you mean "timeout"?',
              path: "nodes.build.timout",
              line: 5,
              column: 34,
              suggestion: "timeout",
            },
            {
              rule: "unknown-node",
              severity: "error",
              message: containing('"chekc" is neither a node nor a terminal'),
              path: "edges[0].to",
              line: 7,
              column: 24,
            },
          ],
        },
        {
          file: "retry.yml",
          valid: true,
          findings: [expect.objectContaining({ rule: "no-give-up-branch", severity: "warning" })],
        },
      ],
    });
  });

  it("--format github prints workflow commands GitHub turns into annotations", async () => {
    const cwd = await workspace({ "my,flow.yml": BROKEN, "retry.yml": WARNING_ONLY });
    const result = await runCli(["validate", "--format=github", "my,flow.yml", "retry.yml"], {
      cwd,
    });
    expect(result.code).toBe(1);
    expect(result.stdout.split("\n")).toEqual([
      '::error file=my%2Cflow.yml,line=5,col=34,title=schema::unknown key "timout" in nodes.build: did you mean "timeout"?',
      '::error file=my%2Cflow.yml,line=7,col=24,title=unknown-node::"chekc" is neither a node nor a terminal: use a node id or one of done, failed, escalated',
      "::warning file=retry.yml,line=9,col=5,title=no-give-up-branch::after 2 traversals of this back-edge the run fails with back-edge-exhausted: add { from: check, to: escalated, label: exhausted } to give up deliberately",
      "",
    ]);
  });

  it("reports every file even when an earlier one is invalid", async () => {
    const cwd = await workspace({ "a.yml": BROKEN, "b.yml": BROKEN });
    const result = await runCli(["validate", "a.yml", "b.yml"], { cwd });
    expect(result.code).toBe(1);
    expect(result.stdout.match(/^a\.yml:/gm)).toHaveLength(2);
    expect(result.stdout.match(/^b\.yml:/gm)).toHaveLength(2);
    expect(result.stderr).toBe("2 files checked: 4 errors, 0 warnings\n");
  });

  it("reports unparsable YAML as a finding (exit 1), not as a crash", async () => {
    const cwd = await workspace({ "bad.yml": "version: 1\nname: [\n" });
    const result = await runCli(["validate", "bad.yml"], { cwd });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(
      /^bad\.yml:\d+:\d+ {2}error {2}YAML does not parse: .* {2}\[yaml\]\n$/,
    );
  });

  describe("finds workflows when given no file", () => {
    it("validates .clustercode/workflow.yml and .clustercode/workflows/*.yml, in order", async () => {
      const cwd = await workspace({
        ".clustercode/workflow.yml": VALID,
        ".clustercode/workflows/b.yml": WARNING_ONLY,
        ".clustercode/workflows/a.yaml": VALID,
        ".clustercode/workflows/notes.md": "# not a workflow",
        "other.yml": BROKEN,
      });
      const result = await runCli(["validate", "--format", "json"], { cwd });
      expect(result.code).toBe(0);
      const report = JSON.parse(result.stdout) as { files: { file: string; valid: boolean }[] };
      expect(report.files.map(({ file, valid }) => [file, valid])).toEqual([
        [".clustercode/workflow.yml", true],
        [".clustercode/workflows/a.yaml", true],
        [".clustercode/workflows/b.yml", true],
      ]);
    });

    it("works with only .clustercode/workflows/", async () => {
      const cwd = await workspace({ ".clustercode/workflows/x.yml": BROKEN });
      const result = await runCli(["validate"], { cwd });
      expect(result.code).toBe(1);
      expect(result.stdout).toMatch(/^\.clustercode\/workflows\/x\.yml:5:34 {2}error/);
    });

    it("exits 2 when there is none", async () => {
      const cwd = await workspace({ "README.md": "hi" });
      const result = await runCli(["validate"], { cwd });
      expect(result.code).toBe(2);
      expect(result.stdout).toBe("");
      expect(result.stderr).toMatch(
        /no workflow found: pass a file, or run inside a repository with \.clustercode\/workflow\.yml \(clustercode init writes one\)/,
      );
    });
  });

  describe("usage and I/O errors exit 2", () => {
    it("a file that does not exist", async () => {
      const cwd = await workspace({});
      const result = await runCli(["validate", "missing.yml"], { cwd });
      expect(result.code).toBe(2);
      expect(result.stderr).toBe(
        "clustercode validate: cannot read missing.yml: no such file or directory\n",
      );
    });

    it("a directory", async () => {
      const cwd = await workspace({ "flows/a.yml": VALID });
      const result = await runCli(["validate", "flows"], { cwd });
      expect(result.code).toBe(2);
      expect(result.stderr).toBe("clustercode validate: cannot read flows: it is a directory\n");
    });

    it("an unknown format", async () => {
      const result = await runCli(["validate", "--format", "xml", LIFECYCLE]);
      expect(result.code).toBe(2);
      expect(result.stderr).toBe(
        "clustercode validate: --format must be one of human, json, github\n",
      );
    });

    it("an unknown option", async () => {
      const result = await runCli(["validate", "--strcit", LIFECYCLE]);
      expect(result.code).toBe(2);
      expect(result.stderr).toBe(
        "clustercode validate: unknown option --strcit (see 'clustercode validate --help')\n",
      );
    });

    it("an unknown command", async () => {
      const result = await runCli(["valdiate"]);
      expect(result.code).toBe(2);
      expect(result.stderr).toBe(
        `clustercode: unknown command "valdiate": did you mean "validate"? See 'clustercode --help'.\n`,
      );
    });
  });
});
