/**
 * `clustercode ui` saves workflows into the repository's `.clustercode/`. A repository whose
 * `.clustercode/workflows` is a symbolic link must not have a save written where it points.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  symlinkSync,
} from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { LocalWorkflowFiles } from "../../src/editor/local-workflow-files.js";

const root = mkdtempSync(join(tmpdir(), "clustercode-editor-links-"));
afterAll(() => rm(root, { recursive: true, force: true }));

const YAML = "version: 1\nname: main\n";
const save = (files: LocalWorkflowFiles) =>
  files.save({
    repo: undefined,
    path: ".clustercode/workflows/main.yml",
    yaml: YAML,
    version: "absent",
    positions: {},
    viewer: { login: "me" },
  });

describe("the local editor's saves", () => {
  it("refuse a workflows directory that is a link out of the repository", async () => {
    const repo = join(root, "hostile");
    const elsewhere = join(root, "elsewhere");
    mkdirSync(join(repo, ".clustercode"), { recursive: true });
    mkdirSync(elsewhere);
    symlinkSync(elsewhere, join(repo, ".clustercode", "workflows"));
    const result = await save(new LocalWorkflowFiles(repo));
    expect(result).toMatchObject({ ok: false, status: 403 });
    expect(result.message).toContain(".clustercode/workflows leads outside the repository");
    expect(readdirSync(elsewhere)).toEqual([]);
  });

  it("save into a plain repository as before", async () => {
    const repo = join(root, "plain");
    mkdirSync(repo);
    const result = await save(new LocalWorkflowFiles(repo));
    expect(result).toMatchObject({ ok: true });
    expect(readFileSync(join(repo, ".clustercode", "workflows", "main.yml"), "utf8")).toBe(YAML);
    expect(existsSync(join(repo, ".clustercode", "layout.json"))).toBe(true);
  });
});
