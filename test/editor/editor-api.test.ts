import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderReports } from "../../src/cli/validate-command.js";
import { parseWorkflow } from "../../src/workflow/parse.js";
import { startLocalEditor, type LocalEditor } from "./local-editor.js";

const MAIN = `# Our main workflow.
version: 1
name: main
on:
  label: clustercode
nodes:
  build:
    kind: run
    run: make
edges:
  - { from: build, to: done }
`;

const BROKEN = `version: 1
name: broken
on:
  label: clustercode
nodes:
  check:
    kind: decision
    evaluator: deterministic
    run: test -f ok
edges:
  - { from: check, to: done, label: "yes" }
  - { from: check, to: failed, label: fail }
`;

describe("the editor's API (clustercode ui)", () => {
  let editor: LocalEditor;
  beforeAll(async () => {
    editor = await startLocalEditor({
      ".clustercode/workflow.yml": MAIN,
      ".clustercode/workflows/nightly.yml": MAIN.replace("name: main", "name: nightly"),
    });
  });
  afterAll(() => editor.close());

  const save = (path: string, body: unknown, csrf = editor.csrf) =>
    fetch(`${editor.base}/api/workflows/${path}`, {
      method: "PUT",
      headers: { "content-type": "application/json", "x-clustercode-csrf": csrf },
      body: JSON.stringify(body),
    });

  it("lists the repository's workflows with their editor pages", async () => {
    const answer = await fetch(`${editor.base}/api/workflows`);
    expect(await answer.json()).toEqual({
      workflows: [
        { path: ".clustercode/workflow.yml", edit: "/workflows/.clustercode/workflow.yml/edit" },
        {
          path: ".clustercode/workflows/nightly.yml",
          edit: "/workflows/.clustercode/workflows/nightly.yml/edit",
        },
      ],
    });
    const page = await (await fetch(`${editor.base}/workflows`)).text();
    expect(page).toContain('href="/workflows/.clustercode/workflows/nightly.yml/edit"');
  });

  it("validates YAML exactly as clustercode validate --format json prints it", async () => {
    const answer = await fetch(`${editor.base}/api/workflows/validate`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ yaml: BROKEN }),
    });
    const { findings } = (await answer.json()) as { findings: unknown[] };
    const printed = JSON.parse(
      renderReports(
        [{ file: "f.yml", valid: false, findings: parseWorkflow(BROKEN).findings }],
        "json",
      ),
    ) as { files: [{ findings: unknown[] }] };
    expect(findings).toEqual(printed.files[0].findings);
    expect(findings).toContainEqual(
      expect.objectContaining({ rule: "impossible-label", path: "edges[0].label", line: 11 }),
    );
    const bad = await fetch(`${editor.base}/api/workflows/validate`, { method: "POST", body: "{" });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ message: 'Send {"yaml": "…"} (at most 256 KiB of YAML).' });
  });

  it("saves with the version it opened, and refuses (409) once the file changed on disk", async () => {
    const path = ".clustercode/workflow.yml";
    const opened = (await (await fetch(`${editor.base}/api/workflows/${path}`)).json()) as {
      yaml: string;
      version: string;
    };
    expect(opened.yaml).toBe(MAIN);
    const edited = MAIN.replace("run: make", "run: make all");
    const saved = await save(path, {
      yaml: edited,
      version: opened.version,
      positions: { build: { x: 10.4, y: 20 } },
    });
    expect(saved.status).toBe(200);
    const { version } = (await saved.json()) as { version: string };
    expect(readFileSync(join(editor.root, path), "utf8")).toBe(edited);
    expect(JSON.parse(readFileSync(join(editor.root, ".clustercode/layout.json"), "utf8"))).toEqual(
      {
        version: 1,
        workflows: { [path]: { build: { x: 10, y: 20 } } },
      },
    );

    writeFileSync(join(editor.root, path), `${edited}# someone else's line\n`);
    const late = await save(path, { yaml: MAIN, version });
    expect(late.status).toBe(409);
    expect(((await late.json()) as { message: string }).message).toMatch(
      /changed on disk since the editor opened it/,
    );
    expect(readFileSync(join(editor.root, path), "utf8")).toBe(`${edited}# someone else's line\n`);
  });

  it("creates a new workflow file, and refuses saves without the page's token or with broken YAML", async () => {
    const path = ".clustercode/workflows/fresh.yml";
    const opened = (await (await fetch(`${editor.base}/api/workflows/${path}`)).json()) as {
      yaml: string;
      version: string;
      exists: boolean;
    };
    expect(opened).toMatchObject({ exists: false, version: "absent" });
    expect(
      (await save(path, { yaml: opened.yaml, version: opened.version }, "forged")).status,
    ).toBe(403);
    const broken = await save(path, { yaml: "nodes: [", version: opened.version });
    expect(broken.status).toBe(400);
    expect((await save(path, { yaml: opened.yaml, version: opened.version })).status).toBe(200);
    expect(readFileSync(join(editor.root, path), "utf8")).toBe(opened.yaml);
  });

  it("names only workflow files", async () => {
    for (const path of [
      "/api/workflows/..%2Fetc%2Fpasswd",
      "/api/workflows/package.json",
      "/workflows/.clustercode/layout.json/edit",
    ]) {
      expect((await fetch(`${editor.base}${path}`)).status).toBe(404);
    }
  });
});
