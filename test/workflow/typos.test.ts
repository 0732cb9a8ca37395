import { describe, expect, it } from "vitest";
import type { Finding } from "../../src/workflow/finding.js";
import { at, validate, workflow, yaml } from "./helpers.js";

/** Every finding of `text`, as rule, place, message and suggestion. */
function findings(text: string): Partial<Finding>[] {
  return validate(text).findings.map(({ rule, line, column, message, suggestion }) => ({
    rule,
    line,
    column,
    message,
    ...(suggestion === undefined ? {} : { suggestion }),
  }));
}

/** The only finding of `text`, which must be where `needle` is. */
function only(text: string, needle: string): Partial<Finding> {
  const all = findings(text);
  expect(all, JSON.stringify(all, null, 2)).toHaveLength(1);
  expect(all[0]).toMatchObject(at(text, needle));
  return all[0] as Partial<Finding>;
}

const twoRuns = "build: { kind: run, run: make }\ncheck: { kind: run, run: make check }";

describe("did you mean", () => {
  it("an unknown key names the key it misspells", () => {
    expect(only(workflow("a: { kind: run, run: make, timout: 1h }"), "timout")).toMatchObject({
      rule: "schema",
      message: 'unknown key "timout" in nodes.a: did you mean "timeout"?',
      suggestion: "timeout",
    });
  });

  it("a misspelt key the node needs is one finding, not also a missing field", () => {
    expect(only(workflow("a: { kind: run, runn: make }"), "runn")).toMatchObject({
      message: 'unknown key "runn" in nodes.a: did you mean "run"?',
      suggestion: "run",
    });
  });

  it("a misspelt top-level key is one finding, not also a missing section", () => {
    const text = yaml`
      version: 1
      name: t
      on: { label: go }
      nods:
        a: { kind: run, run: make }
    `;
    expect(only(text, "nods")).toMatchObject({
      message: 'unknown key "nods": did you mean "nodes"?',
    });
  });

  it("a key the mapping already has is not suggested", () => {
    const text = workflow("a: { kind: run, run: make, timeout: 1h, timout: 2h }");
    expect(only(text, "timout").message).toBe(
      'unknown key "timout" in nodes.a: remove it or fix its spelling',
    );
  });

  it("a word far from every key gets no guess", () => {
    expect(only(workflow("a: { kind: run, run: make, retries: 2 }"), "retries")).not.toHaveProperty(
      "suggestion",
    );
  });

  it("a node kind", () => {
    expect(only(workflow("a: { kind: rnu, run: make }"), "rnu")).toMatchObject({
      message: 'kind must be one of run, loop, prototype, decision, approval: did you mean "run"?',
      suggestion: "run",
    });
  });

  it("a decision's evaluator and a judge's provider", () => {
    const decisions = workflow(
      `${twoRuns}\ngate: { kind: decision, evaluator: stauts }`,
      "- { from: build, to: gate }\n- { from: gate, to: check, label: succeeded }",
    );
    expect(only(decisions, "stauts")).toMatchObject({
      message: 'evaluator must be status, deterministic or agent: did you mean "status"?',
      suggestion: "status",
    });
    const judged = workflow(
      "a: { kind: run, run: make }\nd: { kind: decision, evaluator: agent, question: Done?, judge: { provider: antropic, model: m } }",
      "- { from: a, to: d }\n- { from: d, to: done, label: yes }\n- { from: d, to: failed, label: no }",
    );
    expect(only(judged, "antropic").suggestion).toBe("anthropic");
  });

  it("an engine, built in or declared under engines", () => {
    const text = yaml`
      version: 1
      name: t
      on: { label: go }
      devbox: { secrets: [ANTHROPIC_API_KEY] }
      engines:
        mine: { command: [mine, "{prompt_file}"] }
      nodes:
        a: { kind: run, agent: { engine: cluade }, prompt: hi }
        b: { kind: run, agent: { engine: mien }, prompt: hi }
      edges:
        - { from: a, to: b }
    `;
    expect(findings(text)).toEqual([
      expect.objectContaining({
        ...at(text, "cluade"),
        rule: "unknown-engine",
        suggestion: "claude",
      }),
      expect.objectContaining({ ...at(text, "mien"), rule: "unknown-engine", suggestion: "mine" }),
    ]);
    expect(findings(text)[0]?.message).toMatch(/: did you mean "claude"\?$/);
  });

  it("a time zone, from the zones this runtime knows", () => {
    const text = yaml`
      version: 1
      name: t
      on:
        schedule: [{ cron: "0 6 * * *", timezone: Europe/Londn }]
      nodes:
        a: { kind: run, run: make }
    `;
    expect(only(text, "Europe/Londn")).toMatchObject({
      message:
        'timezone must be an IANA time zone name such as Europe/Paris or America/New_York: did you mean "Europe/London"?',
      suggestion: "Europe/London",
    });
  });
});

describe("one typo, one finding", () => {
  it("an edge to a misspelt node names the node, and the node is not also unreachable", () => {
    const text = workflow(twoRuns, "- { from: build, to: chekc }");
    expect(only(text, "chekc")).toMatchObject({
      rule: "unknown-node",
      message: '"chekc" is neither a node nor a terminal: did you mean "check"?',
      suggestion: "check",
    });
  });

  it("an edge from a misspelt node does not make the nodes after it unreachable", () => {
    const text = workflow(
      `${twoRuns}\nship: { kind: run, run: ship }`,
      "- { from: build, to: check }\n- { from: chekc, to: ship }",
    );
    expect(only(text, "chekc")).toMatchObject({ rule: "unknown-node", suggestion: "check" });
  });

  it("a misspelt edge key is one finding, not also a missing end and an unreachable node", () => {
    const text = workflow(twoRuns, "- { from: build, too: check }");
    expect(only(text, "too")).toMatchObject({
      message: 'unknown key "too" in edges[0]: did you mean "to"?',
    });
  });

  it("a misspelt evaluator key is one finding, not also a missing evaluator", () => {
    const text = workflow(
      `${twoRuns}\ngate: { kind: decision, evalutor: status }`,
      "- { from: build, to: gate }\n- { from: gate, to: check, label: succeeded }",
    );
    expect(only(text, "evalutor").suggestion).toBe("evaluator");
  });

  it("what is wrong beside the typo is still reported, where it is written", () => {
    const text = workflow("a: { kind: run, runn: make, timout: soon }");
    expect(findings(text)).toEqual([
      expect.objectContaining({ ...at(text, "runn"), suggestion: "run" }),
      expect.objectContaining({ ...at(text, "timout"), suggestion: "timeout" }),
      expect.objectContaining({
        ...at(text, "soon"),
        message: expect.stringContaining("nodes.a.timout must be a duration") as unknown,
      }),
    ]);
  });

  it("a misspelt edge label is one finding, not also a missing label", () => {
    const text = workflow(
      "build: { kind: run, run: make }\nok: { kind: approval }",
      "- { from: build, to: ok }\n- { from: ok, to: done, lable: approved }\n- { from: ok, to: failed, label: rejected }",
    );
    expect(only(text, "lable").suggestion).toBe("label");
  });

  it("a kind that is no kind is the schema's finding alone, even where rework re-opens", () => {
    const text = `${workflow("build: { kind: foo, run: make }")}rework: { node: build }\n`;
    expect(only(text, "foo").rule).toBe("schema");
  });

  it("a typo never makes the workflow valid", () => {
    expect(validate(workflow("a: { kind: run, runn: make }")).ok).toBe(false);
  });
});

describe("GitHub Actions habits", () => {
  const cases: [string, string, RegExp][] = [
    [
      "needs: build",
      "needs",
      /unknown key "needs" in nodes.a: .*add \{ from: <earlier node>, to: <this node> \} under edges/,
    ],
    ["if: ok", "if", /unknown key "if" in nodes.a: .*decision node/],
    ["steps: []", "steps", /unknown key "steps" in nodes.a: .*run node's run holds the commands/],
    ["env: {}", "env", /unknown key "env" in nodes.a: .*devbox.secrets.*outputs and inputs/],
    ["runs-on: ubuntu", "runs-on", /unknown key "runs-on" in nodes.a: .*under devbox/],
    ["timeout-minutes: 5", "timeout-minutes", /the limit is timeout, a duration such as 30m/],
  ];
  it.each(cases)("%s says what does its job here", (field, needle, message) => {
    const finding = only(workflow(`a: { kind: run, run: make, ${field} }`), needle);
    expect(finding.message).toMatch(message);
    expect(finding).not.toHaveProperty("suggestion");
  });

  it("jobs at the top level are nodes", () => {
    const text = `${workflow("a: { kind: run, run: make }")}jobs: {}\n`;
    expect(only(text, "jobs").message).toMatch(/jobs are its nodes: put them under nodes/);
  });

  it("Actions events under on: name the triggers", () => {
    const text = yaml`
      version: 1
      name: t
      on: { label: go, push: {} }
      nodes:
        a: { kind: run, run: make }
    `;
    expect(only(text, "push").message).toMatch(/use label, command or schedule/);
  });
});
