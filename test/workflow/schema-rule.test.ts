import { describe, expect, it } from "vitest";
import { at, expectClean, expectOne, findingsOf, validate, workflow, yaml } from "./helpers.js";

const run = "a: { kind: run, run: make }";

/** A valid workflow with `line` added under `on:` (as a schedule entry). */
const scheduled = (schedule: string) =>
  yaml`
    version: 1
    name: nightly
    on:
      schedule:
        - ${schedule}
    nodes:
      a: { kind: run, run: make }
  `;

describe("schema: unknown keys", () => {
  it("at the top level, at the key", () => {
    const text = `${workflow(run)}nodez: {}\n`;
    const finding = expectOne(text, "schema", { needle: "nodez" });
    expect(finding.message).toBe('unknown key "nodez": remove it or fix its spelling');
    expect(finding.path).toBe("nodez");
  });

  it("reports each unknown key of one mapping", () => {
    const text = workflow("a: { kind: run, run: make, retries: 2, cache: true }");
    const findings = findingsOf(text, "schema");
    expect(findings).toEqual([
      expect.objectContaining({ path: "nodes.a.retries", ...at(text, "retries") }),
      expect.objectContaining({ path: "nodes.a.cache", ...at(text, "cache") }),
    ]);
  });

  it('refuses a "__proto__" key, which would otherwise vanish from the parsed workflow', () => {
    const text = workflow(
      `${run}\n__proto__: { kind: run, run: x }`,
      "- { from: a, to: __proto__ }",
    );
    const findings = findingsOf(text, "schema");
    expect(findings).toContainEqual(
      expect.objectContaining({ path: "nodes.__proto__", ...at(text, "__proto__:") }),
    );
    expect(validate(text).ok).toBe(false);
  });
});

describe("schema: wrong types", () => {
  it("names the field, what it must be and what it is, at the value", () => {
    const text = yaml`
      version: 1
      name: t
      on: { label: go }
      devbox: { cpu: two }
      nodes:
        a: { kind: run, run: make }
    `;
    const finding = expectOne(text, "schema", { needle: "two" });
    expect(finding.message).toBe('devbox.cpu must be a number, not string "two"');
  });

  it("a mapping where a list belongs", () => {
    const text = `${workflow(run)}edges: { from: a, to: done }\n`;
    const finding = expectOne(text, "schema", { needle: "{ from" });
    expect(finding.message).toBe("edges must be a list, not a mapping");
  });

  it("a file that is not a mapping", () => {
    const text = "- version: 1\n";
    const finding = expectOne(text, "schema", { needle: "-" });
    expect(finding.message).toBe("the workflow must be a mapping, not a list");
  });

  it("an empty file", () => {
    const finding = expectOne("", "schema", { needle: "" });
    expect(finding.message).toMatch(
      /the file is empty: a workflow needs version, name, on and nodes/,
    );
  });

  it("an unknown node kind", () => {
    const text = workflow("a: { kind: script, run: make }");
    const finding = expectOne(text, "schema", { needle: "script" });
    expect(finding.message).toBe("kind must be one of run, loop, prototype, decision, approval");
  });

  it("an unknown enum value, listing the choices", () => {
    const text = workflow(
      "race: { kind: prototype, brief: b, variants: [{ engine: claude }, { engine: codex }], select: fastest }",
    );
    const finding = expectOne(text, "schema", { needle: "fastest" });
    expect(finding.message).toBe("nodes.race.select must be one of first, judge");
  });

  it("a value that fits no branch of a union", () => {
    const text = workflow("a: { kind: run, run: make }").replace("label: go", "label: 5");
    const finding = expectOne(text, "schema", { needle: "5" });
    expect(finding.message).toBe("on.label must be a label or a list of labels");
  });

  it("numbers out of range", () => {
    const text = `${workflow(run)}budget: { max_cost_usd: -1 }\nadmission: { max_active_runs: 0 }\n`;
    const findings = findingsOf(text, "schema");
    expect(findings).toEqual([
      expect.objectContaining({
        message: "budget.max_cost_usd must be a number of US dollars greater than 0",
        ...at(text, "-1"),
      }),
      expect.objectContaining({
        message: "admission.max_active_runs must be greater than 0",
        ...at(text, "0 }"),
      }),
    ]);
  });

  it("an empty string where text is required", () => {
    const text = workflow('a: { kind: run, run: "" }');
    const finding = expectOne(text, "schema", { needle: '""' });
    expect(finding.message).toBe("nodes.a.run must not be empty");
  });
});

describe("schema: missing required fields", () => {
  it("at the top level, at the start of the file", () => {
    const text = "version: 1\nname: t\nnodes:\n  a: { kind: run, run: make }\n";
    const finding = expectOne(text, "schema", { needle: "version" });
    expect(finding.message).toBe('the workflow needs "on": add it');
  });

  it("inside a node, at the node's key", () => {
    const text = workflow(
      "fix: { kind: loop, agent: { engine: claude }, budget: { max_iterations: 3 }, gates: [{ name: t, run: npm test }] }",
    );
    const finding = expectOne(text, "schema", { needle: "fix:" });
    expect(finding.message).toBe('nodes.fix needs "goal": add it');
  });

  it("inside an edge, at the edge", () => {
    const text = workflow(`${run}\nb: { kind: run, run: make b }`, "- { from: a }");
    const finding = expectOne(text, "schema", { needle: "{ from: a }" });
    expect(finding.message).toBe('edges[0] needs "to": add it');
  });

  it("a run node with neither run nor agent and prompt", () => {
    const text = workflow("a: { kind: run, title: Build }");
    const finding = expectOne(text, "schema", { needle: "{ kind" });
    expect(finding.message).toBe("a run node needs run (a command) or agent and prompt");
  });

  it("a deterministic decision without run, at its evaluator", () => {
    const text = workflow(
      "build: { kind: run, run: make }\nsmoke: { kind: decision, evaluator: deterministic }",
      "- { from: build, to: smoke }\n- { from: smoke, to: done, label: pass }",
    );
    const finding = expectOne(text, "schema", { needle: "deterministic" });
    expect(finding.message).toMatch(
      /a deterministic decision needs run: a command whose exit 0 means pass/,
    );
  });
});

describe("schema: durations", () => {
  it.each(["2 hours", "1.5h", "90", "h"])("refuses %j, at the value", (timeout) => {
    const text = workflow(`a: { kind: run, run: make, timeout: "${timeout}" }`);
    const finding = expectOne(text, "schema", { needle: `"${timeout}"` });
    expect(finding.message).toBe(
      "nodes.a.timeout must be a duration such as 30m, 2h, 1d or 1h30m (units s, m, h, d)",
    );
  });

  it("refuses a number", () => {
    const text = `${workflow(run)}budget: { wall_clock: 12 }\n`;
    const finding = expectOne(text, "schema", { needle: "12 }" });
    expect(finding.message).toMatch(/^budget.wall_clock must be a duration/);
  });

  it.each(["30s", "45m", "2h", "1d", "1h30m"])("accepts %s", (timeout) => {
    expectClean(workflow(`a: { kind: run, run: make, timeout: ${timeout} }`));
  });
});

describe("schema: ids", () => {
  it.each(["Build", "1st", "-x", "a".repeat(41), "build.step"])(
    "refuses node id %j, at the key",
    (id) => {
      const text = workflow(
        `${run}\n"${id}": { kind: run, run: make }`,
        `- { from: a, to: "${id}" }`,
      );
      const finding = expectOne(text, "schema", { needle: `"${id}":` });
      expect(finding.message).toMatch(
        /^node id must be lower-case letters, digits, "-" or "_", start with a letter and be at most 40 characters: rename/,
      );
    },
  );

  it("still checks the fields of a node whose id is bad", () => {
    const text = workflow(`${run}\nBuild: { kind: run, run: 5 }`, "- { from: a, to: Build }");
    const findings = findingsOf(text, "schema");
    expect(findings.map((finding) => finding.path)).toEqual(["nodes.Build", "nodes.Build.run"]);
    expect(findings[1]).toMatchObject({ ...at(text, "5 }") });
  });

  it("refuses a bad engine id under engines", () => {
    const text = yaml`
      version: 1
      name: t
      on: { label: go }
      engines:
        My-Agent: { command: [agent, "{prompt_file}"] }
      nodes:
        a: { kind: run, run: make }
    `;
    const finding = expectOne(text, "schema", { needle: "My-Agent" });
    expect(finding.message).toMatch(/^engine must be lower-case/);
  });

  it("refuses a bad workflow name", () => {
    const text = workflow(run).replace("name: t", "name: My Workflow");
    const finding = expectOne(text, "schema", { needle: "My Workflow" });
    expect(finding.message).toMatch(/^name must be lower-case letters, digits and "-"/);
  });

  it.each(["build", "b", "build_2", "deploy-approval", "a".repeat(40)])(
    "accepts node id %j",
    (id) => {
      expectClean(workflow(`${run}\n${id}: { kind: run, run: make }`, `- { from: a, to: ${id} }`));
    },
  );
});

describe("schema: cron", () => {
  it.each([
    ["0 6 * *", /cron must have five fields .* "0 6 \* \*" has 4/],
    ["0 0 6 * * *", /cron must have five fields .* has 6/],
    ["@daily", /cron must have five fields/],
    ["61 6 * * *", /cron "61 6 \* \* \*" is not valid: .*minute/i],
    ["0 25 * * *", /cron "0 25 \* \* \*" is not valid: .*hour/i],
    ["0 6 32 * *", /is not valid/],
    ["0 6 * 13 *", /is not valid/],
    ["0 6 * * mon-xyz", /is not valid/],
  ])("refuses %j, at the value", (cron, message) => {
    const text = scheduled(`cron: "${cron}"`);
    const finding = expectOne(text, "schema", { needle: `"${cron}"` });
    expect(finding.message).toMatch(message);
  });

  it.each(["0 6 * * 1-5", "*/15 * * * *", "0 0 1 1 *", "30 2 * * sun", "0 9-17 * * mon-fri"])(
    "accepts %j",
    (cron) => {
      expectClean(scheduled(`cron: "${cron}"`));
    },
  );
});

describe("schema: timezone", () => {
  it.each(["Mars/Olympus", "Paris", "GMT+25"])("refuses %j, at the value", (timezone) => {
    const text = scheduled(`{ cron: "0 6 * * *", timezone: "${timezone}" }`);
    const finding = expectOne(text, "schema", { needle: `"${timezone}"` });
    expect(finding.message).toBe(
      "timezone must be an IANA time zone name such as Europe/Paris or America/New_York",
    );
  });

  it.each(["Europe/Paris", "America/New_York", "UTC", "Asia/Kolkata"])("accepts %j", (timezone) => {
    expectClean(scheduled(`{ cron: "0 6 * * *", timezone: ${timezone} }`));
  });
});

describe("report all at once", () => {
  it("gives every finding of a file with many problems, in file order", () => {
    const text = yaml`
      version: 1
      name: Fix-Tests
      on: { label: go }
      nodes:
        fix:
          kind: loop
          goal: Make the tests pass
          agent: { engine: gemini }
          budget: { max_iterations: 100 }
        review:
          kind: decision
          evaluator: deterministic
          run: npm test
          judge: { provider: anthropic, model: claude-opus-4-1 }
        ship: { kind: approval, timeout: 10m }
      edges:
        - { from: fix, to: review }
        - { from: review, to: fix, label: fail, back: true }
        - { from: review, to: ship, label: yes }
        - { from: ship, to: dne, label: approved }
    `;
    const result = validate(text);
    expect(result.ok).toBe(false);
    const summary = result.findings.map((finding) => [finding.rule, finding.path]);
    expect(summary).toEqual([
      ["schema", "name"],
      ["loop-contract", "nodes.fix.gates"],
      ["unknown-engine", "nodes.fix.agent.engine"],
      ["loop-contract", "nodes.fix.budget.max_iterations"],
      ["schema", "nodes.review.judge"],
      ["approval-window", "nodes.ship.timeout"],
      ["no-give-up-branch", "edges[1]"],
      ["impossible-label", "edges[2].label"],
      ["unknown-node", "edges[3].to"],
    ]);
    const positions = result.findings.map((finding) => [finding.line, finding.column]);
    expect(positions).toEqual([...positions].sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!));
  });
});
