import { readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { RULE_IDS, type Finding } from "../../src/workflow/finding.js";
import { renderMermaid } from "../../src/workflow/mermaid.js";
import { parseWorkflow } from "../../src/workflow/parse.js";

const LIFECYCLE = readFileSync(
  join(import.meta.dirname, "../../workflows-schema/examples/lifecycle.yml"),
  "utf8",
);
const RUNS = { numRuns: 200 };
/** The rules whose findings are warnings; every other rule reports errors. */
const WARNING_RULES = new Set<string>([
  "no-give-up-branch",
  "budget-without-cost",
  "engine-without-key",
]);

/** Validates `text` and checks what must hold for any input, returning the findings. */
function validateAnything(text: string): Finding[] {
  const result = parseWorkflow(text);
  const lines = text.split("\n");
  for (const finding of result.findings) {
    const where = `${finding.rule} at ${finding.line}:${finding.column} in ${JSON.stringify(text.slice(0, 300))}`;
    expect(RULE_IDS, where).toContain(finding.rule);
    expect(finding.severity, where).toBe(WARNING_RULES.has(finding.rule) ? "warning" : "error");
    expect(finding.message, where).not.toBe("");
    expect(finding.line, where).toBeGreaterThanOrEqual(1);
    expect(finding.line, where).toBeLessThanOrEqual(lines.length);
    expect(finding.column, where).toBeGreaterThanOrEqual(1);
    expect(finding.column, where).toBeLessThanOrEqual((lines[finding.line - 1] ?? "").length + 1);
  }
  const hasError = result.findings.some((finding) => finding.severity === "error");
  expect(result.ok).toBe(!hasError);
  return result.findings;
}

// Pieces of YAML syntax, so that random text is often almost-YAML rather than one long scalar.
const SYNTAX = [
  "\n",
  "\n  ",
  "\n    ",
  "  ",
  "\t",
  "\r\n",
  "- ",
  ": ",
  "? ",
  "{",
  "}",
  "[",
  "]",
  ", ",
  "&a ",
  "*a",
  "!!str ",
  "!tag ",
  "|\n  ",
  ">-\n  ",
  "'",
  '"',
  "# c",
  "---\n",
  "...\n",
  "%YAML 1.2\n",
  "<<: ",
  "version: 1",
  "name: t",
  "on: { label: go }",
  "nodes:",
  "edges:",
  "kind: run",
  "kind: decision",
  "evaluator: status",
  "run: make",
  "from: a",
  "to: done",
  "label: x",
  "back: true",
  "a",
  "b",
  "1",
  "null",
  "~",
  "é",
  "😀",
  "\u2028",
  "\ufeff",
];

const yamlish = fc
  .array(fc.oneof(fc.constantFrom(...SYNTAX), fc.string({ maxLength: 4 })), { maxLength: 60 })
  .map((parts) => parts.join(""));

describe("the validator never throws and always points inside the file", () => {
  it("on arbitrary text", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 200 }), (text) => {
        validateAnything(text);
      }),
      RUNS,
    );
  });

  it("on YAML-like text", () => {
    fc.assert(
      fc.property(yamlish, (text) => {
        validateAnything(text);
      }),
      { numRuns: 400 },
    );
  });

  it("on the lifecycle with random edits", () => {
    const edit = fc.record({
      at: fc.nat({ max: LIFECYCLE.length }),
      remove: fc.nat({ max: 40 }),
      insert: fc.oneof(fc.constantFrom(...SYNTAX), fc.string({ maxLength: 8 })),
    });
    fc.assert(
      fc.property(fc.array(edit, { minLength: 1, maxLength: 4 }), (edits) => {
        let text = LIFECYCLE;
        for (const { at, remove, insert } of edits) {
          const start = Math.min(at, text.length);
          text = text.slice(0, start) + insert + text.slice(start + remove);
        }
        validateAnything(text);
      }),
      RUNS,
    );
  });

  it("on arbitrary JSON values written as YAML", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (value) => {
        validateAnything(stringify(value));
      }),
      RUNS,
    );
  });

  it("on workflow-shaped mappings whose fields hold arbitrary values", () => {
    const anything = fc.jsonValue({ maxDepth: 3 });
    const shaped = fc.record(
      {
        version: fc.oneof(fc.constant(1), anything),
        name: fc.oneof(fc.constant("t"), anything),
        on: fc.oneof(fc.constant({ label: "go" }), anything),
        devbox: anything,
        budget: anything,
        admission: anything,
        engines: fc.dictionary(fc.string({ maxLength: 6 }), anything, { maxKeys: 3 }),
        approvers: anything,
        nodes: fc.dictionary(fc.string({ maxLength: 6 }), anything, { maxKeys: 5 }),
        edges: fc.oneof(fc.array(anything, { maxLength: 5 }), anything),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(shaped, (value) => {
        validateAnything(stringify(value));
      }),
      RUNS,
    );
  });
});

// Ids that stress lookups: terminals, Object.prototype keys, near-misses of valid ids.
const IDS = [
  "a",
  "b",
  "c",
  "d",
  "e",
  "done",
  "failed",
  "escalated",
  "constructor",
  "toString",
  "B",
];
const LABELS = [
  "succeeded",
  "failed",
  "timed_out",
  "exhausted",
  "pass",
  "fail",
  "default",
  "approved",
  "rejected",
  "expired",
  "yes",
];

const nodeArbitrary = fc.oneof(
  fc.record({ kind: fc.constant("run"), run: fc.constant("make") }),
  fc.record({
    kind: fc.constant("run"),
    agent: fc.constant({ engine: "claude" }),
    prompt: fc.constant("p"),
  }),
  fc.record({
    kind: fc.constant("loop"),
    goal: fc.constant("g"),
    agent: fc.record({ engine: fc.constantFrom("claude", "codex", "nope") }),
    gates: fc.constantFrom([], [{ name: "t", run: "npm test" }]),
    budget: fc.record(
      {
        max_iterations: fc.integer({ min: -1, max: 60 }),
        max_daily_cost_usd: fc.constantFrom(-1, 20),
      },
      { requiredKeys: [] },
    ),
  }),
  fc.record({
    kind: fc.constant("prototype"),
    brief: fc.constant("b"),
    variants: fc.array(fc.constant({ engine: "claude" }), { maxLength: 8 }),
  }),
  fc.record({
    kind: fc.constant("decision"),
    evaluator: fc.constantFrom("status", "deterministic", "agent", "coin"),
    run: fc.constant("test -f x"),
  }),
  fc.record(
    {
      kind: fc.constant("approval"),
      timeout: fc.constantFrom("30m", "1h", "72h", "31d", "soon"),
      on_timeout: fc.constantFrom(...LABELS),
    },
    { requiredKeys: ["kind"] },
  ),
  fc.record({ kind: fc.constantFrom("constructor", "hasOwnProperty", "script") }),
);

const edgeArbitrary = fc.record(
  {
    from: fc.constantFrom(...IDS),
    to: fc.constantFrom(...IDS, "nowhere"),
    label: fc.constantFrom(...LABELS),
    back: fc.boolean(),
    max_traversals: fc.integer({ min: -1, max: 25 }),
  },
  { requiredKeys: ["from", "to"] },
);

describe("random graphs", () => {
  it("never throw, point inside the file, and render when valid", () => {
    const graph = fc.record({
      nodes: fc.dictionary(fc.constantFrom(...IDS), nodeArbitrary, { minKeys: 1, maxKeys: 8 }),
      edges: fc.array(edgeArbitrary, { maxLength: 14 }),
    });
    fc.assert(
      fc.property(graph, ({ nodes, edges }) => {
        const text = stringify({ version: 1, name: "t", on: { label: "go" }, nodes, edges });
        validateAnything(text);
        const result = parseWorkflow(text);
        if (result.ok) {
          const chart = renderMermaid(result.workflow);
          for (const node of Object.keys(result.workflow.nodes)) expect(chart).toContain(node);
        }
      }),
      { numRuns: 400 },
    );
  });

  it("report a node kind named after an Object.prototype key as a schema error", () => {
    const text = stringify({
      version: 1,
      name: "t",
      on: { label: "go" },
      nodes: { a: { kind: "constructor" }, s: { kind: "decision", evaluator: "status" } },
      edges: [
        { from: "a", to: "s" },
        { from: "s", to: "done", label: "succeeded" },
      ],
    });
    expect(validateAnything(text).map((finding) => finding.rule)).toEqual(["schema"]);
  });

  it("built to be valid (a tree of runs and status decisions, plus back-edges) validate and render", () => {
    const OUTCOMES = ["succeeded", "failed", "timed_out"];
    const tape = fc.array(fc.nat({ max: 1000 }), { minLength: 60, maxLength: 60 });
    const size = fc.integer({ min: 1, max: 20 });
    fc.assert(
      fc.property(size, tape, (count, choices) => {
        let next = 0;
        const choose = (n: number) => (choices[next++ % choices.length] ?? 0) % n;
        const nodes: Record<string, object> = {};
        const edges: Record<string, unknown>[] = [];
        // Outgoing slots still free: a run has one unlabelled edge, a decision one per outcome.
        const free: { from: string; label?: string }[] = [];
        for (let i = 0; i < count; i++) {
          const id = `n${i}`;
          const decision = i > 0 && choose(3) === 0;
          nodes[id] = decision
            ? { kind: "decision", evaluator: "status" }
            : { kind: "run", run: `step ${i}` };
          if (i > 0) {
            const [slot] = free.splice(choose(free.length), 1);
            edges.push({ ...slot, to: id });
          }
          if (decision) for (const label of OUTCOMES) free.push({ from: id, label });
          else free.push({ from: id });
          if (free.length === 0) break;
        }
        let backEdges = 0;
        for (const slot of free) {
          const target = choose(4);
          if (target < 3) {
            edges.push({ ...slot, to: ["done", "failed", "escalated"][target] });
          } else if (slot.label !== undefined) {
            const to = `n${choose(Number(slot.from.slice(1)) + 1)}`;
            edges.push({ ...slot, to, back: true, max_traversals: 1 + choose(20) });
            if (!edges.some((edge) => edge.from === slot.from && edge.label === "exhausted"))
              edges.push({ from: slot.from, to: "escalated", label: "exhausted" });
            backEdges++;
          }
        }
        const text = stringify({ version: 1, name: "t", on: { label: "go" }, nodes, edges });
        const result = parseWorkflow(text);
        expect(result.findings, text).toEqual([]);
        if (!result.ok) return;
        const chart = renderMermaid(result.workflow);
        for (const id of Object.keys(nodes)) expect(chart).toContain(`"${id}<br/>`);
        expect(chart.match(/-\.->/g) ?? []).toHaveLength(backEdges);
      }),
      RUNS,
    );
  });
});
