import { mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NODE_KINDS } from "../../src/workflow/workflow.schema.js";
import { YamlLanguageClient } from "./yaml-language-client.js";

const ROOT = join(import.meta.dirname, "../..");
const SCHEMA = pathToFileURL(join(ROOT, "workflows-schema/workflow.schema.json")).href;
const EXAMPLES = join(ROOT, "workflows-schema/examples");

/** A workflow with `nodes` (YAML, indented two spaces) and the modeline naming the local schema. */
const workflow = (nodes: string, rest = "") =>
  `# yaml-language-server: $schema=${SCHEMA}\nversion: 1\nname: demo\non: { command: true }\nnodes:\n${nodes}${rest}`;

let client: YamlLanguageClient;
let documents = 0;
const uri = () => `file:///tmp/clustercode-editor/flow-${++documents}.yml`;
const messages = async (text: string) =>
  (await client.diagnose(uri(), text)).map((diagnostic) => diagnostic.message);

beforeAll(async () => {
  client = await YamlLanguageClient.start();
}, 30_000);
afterAll(async () => {
  await client.stop();
});

describe("the JSON Schema in yaml-language-server", () => {
  it.each(readdirSync(EXAMPLES).filter((file) => file.endsWith(".yml")))(
    "finds nothing wrong with the example %s (through its own modeline)",
    async (file) => {
      const path = join(EXAMPLES, file);
      const diagnostics = await client.diagnose(
        pathToFileURL(path).href,
        readFileSync(path, "utf8"),
      );
      expect(diagnostics).toEqual([]);
    },
  );

  it("finds the schema through the documented modeline into node_modules", async () => {
    const project = mkdtempSync(join(tmpdir(), "clustercode-editor-"));
    mkdirSync(join(project, "node_modules"));
    symlinkSync(ROOT, join(project, "node_modules/clustercode-workflows"));
    const modeline =
      "# yaml-language-server: $schema=../node_modules/clustercode-workflows/workflows-schema/workflow.schema.json";
    const text = `${modeline}\nversion: 1\nname: demo\non: { command: true }\nnodes:\n  a: { kind: rnu, run: "true" }\n`;
    const readme = readFileSync(join(ROOT, "docs/workflow-language.md"), "utf8");
    expect(readme).toContain(modeline);
    const file = pathToFileURL(join(project, ".clustercode/workflow.yml")).href;
    const found = (await client.diagnose(file, text)).map((diagnostic) => diagnostic.message);
    expect(found).toEqual([expect.stringContaining('"approval"')]);
  });

  it("answers a kind typo with the five kinds", async () => {
    const found = await messages(workflow("  build:\n    kind: rnu\n    run: npm test\n"));
    expect(found).toHaveLength(1);
    for (const kind of NODE_KINDS) expect(found[0]).toContain(`"${kind}"`);
  });

  it("completes a filled node's kind with all five kinds", async () => {
    const text = workflow("  build:\n    kind: run\n    run: npm test\n");
    const document = uri();
    await client.diagnose(document, text);
    const line = text.split("\n").indexOf("    kind: run");
    const items = await client.complete(document, line, "    kind: ".length);
    expect(items.map((item) => item.label).sort()).toEqual([...NODE_KINDS].sort());
  });

  it("completes the fields of the node's own kind", async () => {
    const text = workflow("  fix:\n    kind: loop\n    \n");
    const document = uri();
    await client.diagnose(document, text);
    const line = text.split("\n").indexOf("    kind: loop") + 1;
    const labels = (await client.complete(document, line, 4)).map((item) => item.label);
    expect(labels).toEqual(expect.arrayContaining(["goal", "agent", "gates", "budget"]));
    expect(labels).not.toContain("variants");
    expect(labels).not.toContain("evaluator");
  });

  it.each([
    [
      "more than 20 nodes",
      Array.from({ length: 21 }, (_, i) => `  n${i}: { kind: run, run: "true" }\n`).join(""),
      /20/,
    ],
    ["a node named done", '  done: { kind: run, run: "true" }\n', /done/],
    [
      "a loop without gates",
      "  fix:\n    kind: loop\n    goal: g\n    agent: { engine: claude }\n    budget: { max_iterations: 3 }\n",
      /gates/,
    ],
    [
      "a loop without max_iterations",
      '  fix:\n    kind: loop\n    goal: g\n    agent: { engine: claude }\n    gates: [{ name: t, run: "true" }]\n    budget: {}\n',
      /max_iterations/,
    ],
    [
      "a run node with both run and an agent",
      '  a: { kind: run, run: "true", agent: { engine: claude }, prompt: p }\n',
      /not allowed/,
    ],
    [
      "a deterministic decision without run",
      '  a: { kind: run, run: "true" }\n  d: { kind: decision, evaluator: deterministic }\n',
      /"run"/,
    ],
    [
      "max_traversals on a forward edge",
      '  a: { kind: run, run: "true" }\n',
      /not allowed/,
      "edges: [{ from: a, to: done, max_traversals: 2 }]\n",
    ],
    [
      "a workflow nothing starts",
      '  a: { kind: run, run: "true" }\n',
      /"label"|"schedule"/,
      "",
      "on: { command: false }",
    ],
  ])("refuses %s", async (_what, nodes, expected, rest = "", on = "") => {
    const text = workflow(nodes, rest);
    const found = await messages(on === "" ? text : text.replace("on: { command: true }", on));
    expect(found.join("\n")).toMatch(expected);
  });

  it("refuses a cron with three fields", async () => {
    const found = await messages(
      workflow('  a: { kind: run, run: "true" }\n').replace(
        "on: { command: true }",
        'on: { schedule: [{ cron: "0 9 *" }] }',
      ),
    );
    expect(found.join("\n")).toMatch(/pattern|cron/i);
  });
});
