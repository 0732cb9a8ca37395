import { describe, expect, it } from "vitest";
import { RULE_IDS, type RuleId } from "../../src/workflow/finding.js";
import { expectClean, expectOne, findingsOf, validate, workflow, yaml } from "./helpers.js";

/** One workflow that breaks a rule, where the finding must point, and a near miss that does not. */
interface RuleCase {
  triggers: string;
  where: { needle: string; occurrence?: number };
  /** The message must say how to fix the problem. */
  fix: RegExp;
  severity?: "warning";
  /** Close to `triggers` but valid, with no finding at all. */
  nearMiss: string;
}

const chain = (count: number) => ({
  nodes: Array.from({ length: count }, (_, i) => `n${i}: { kind: run, run: step ${i} }`).join("\n"),
  edges: Array.from({ length: count - 1 }, (_, i) => `- { from: n${i}, to: n${i + 1} }`).join("\n"),
});

const twoRuns = "build: { kind: run, run: make }\ncheck: { kind: run, run: make check }";
const approvalAfterBuild = (approval: string, edges: string) =>
  workflow(
    `build: { kind: run, run: make }\nship: { kind: approval${approval} }`,
    `- { from: build, to: ship }\n${edges}`,
  );
const agentReview =
  "review: { kind: decision, evaluator: agent, question: Done?, judge: { provider: anthropic, model: claude-opus-4-1 } }";

// Typed by RuleId so that a new rule without a case here does not compile.
const CASES: Record<RuleId, RuleCase> = {
  yaml: {
    triggers: yaml`
      version: 1
      name: t
      on:
        label: go
        label: stop
      nodes:
        a: { kind: run, run: make }
    `,
    where: { needle: "label: stop" },
    fix: /appears twice.*keep one/,
    nearMiss: yaml`
      version: 1
      name: t
      on:
        label: go
      nodes:
        a: { kind: run, run: make }
    `,
  },
  schema: {
    triggers: workflow("a: { kind: run, run: make, timout: 1h }"),
    where: { needle: "timout" },
    fix: /unknown key "timout" in nodes.a: did you mean "timeout"\?/,
    nearMiss: workflow("a: { kind: run, run: make, timeout: 1h }"),
  },
  "max-nodes": {
    triggers: workflow(chain(21).nodes, chain(21).edges),
    where: { needle: "n20:" },
    fix: /21 nodes; the limit is 20: split it into several workflows/,
    nearMiss: workflow(chain(20).nodes, chain(20).edges),
  },
  "unknown-node": {
    triggers: workflow(twoRuns, "- { from: build, to: chekc }"),
    where: { needle: "chekc" },
    fix: /"chekc" is neither a node nor a terminal: did you mean "check"\?/,
    nearMiss: workflow(twoRuns, "- { from: build, to: check }"),
  },
  "reserved-id": {
    triggers: workflow(
      "build: { kind: run, run: make }\nescalated: { kind: run, run: page }",
      "- { from: build, to: escalated }",
    ),
    where: { needle: "escalated:" },
    fix: /"escalated" is a terminal .* rename the node/,
    nearMiss: workflow(
      "build: { kind: run, run: make }\nescalate: { kind: run, run: page }",
      "- { from: build, to: escalate }",
    ),
  },
  "forward-cycle": {
    triggers: workflow(twoRuns, "- { from: build, to: check }\n- { from: check, to: build }"),
    where: { needle: "{ from: check, to: build }" },
    fix: /cycle build → check → build: mark the edge from check to build with back: true and max_traversals/,
    nearMiss: workflow(
      twoRuns,
      "- { from: build, to: check }\n- { from: check, to: build, back: true, max_traversals: 2 }\n- { from: check, to: escalated, label: exhausted }",
    ),
  },
  "back-edge-cap": {
    triggers: workflow(
      twoRuns,
      "- { from: build, to: check }\n- { from: check, to: build, back: true, max_traversals: 21 }\n- { from: check, to: escalated, label: exhausted }",
    ),
    where: { needle: "21 }" },
    fix: /max_traversals must be between 1 and 20, not 21/,
    nearMiss: workflow(
      twoRuns,
      "- { from: build, to: check }\n- { from: check, to: build, back: true, max_traversals: 20 }\n- { from: check, to: escalated, label: exhausted }",
    ),
  },
  "unreachable-node": {
    triggers: workflow(twoRuns),
    where: { needle: "check:" },
    fix: /the entry node build can never reach check: add an edge into it or remove it/,
    nearMiss: workflow(twoRuns, "- { from: build, to: check }"),
  },
  "impossible-label": {
    triggers: workflow(
      "build: { kind: run, run: make }\nsmoke: { kind: decision, evaluator: deterministic, run: ./smoke.sh }",
      "- { from: build, to: smoke }\n- { from: smoke, to: done, label: yes }\n- { from: smoke, to: failed, label: fail }",
    ),
    where: { needle: "yes" },
    fix: /deterministic decision smoke can never produce "yes": use one of pass, fail, default/,
    nearMiss: workflow(
      "build: { kind: run, run: make }\nsmoke: { kind: decision, evaluator: deterministic, run: ./smoke.sh }",
      "- { from: build, to: smoke }\n- { from: smoke, to: done, label: pass }\n- { from: smoke, to: failed, label: fail }",
    ),
  },
  "missing-label": {
    triggers: approvalAfterBuild(
      "",
      "- { from: ship, to: done }\n- { from: ship, to: failed, label: rejected }",
    ),
    where: { needle: "{ from: ship, to: done }" },
    fix: /edges out of approval ship need a label saying which outcome takes them/,
    nearMiss: approvalAfterBuild(
      "",
      "- { from: ship, to: done, label: approved }\n- { from: ship, to: failed, label: rejected }",
    ),
  },
  "duplicate-label": {
    triggers: approvalAfterBuild(
      "",
      "- { from: ship, to: done, label: approved }\n- { from: ship, to: failed, label: approved }",
    ),
    where: { needle: "approved", occurrence: 2 },
    fix: /ship already has an edge labelled "approved".*remove this edge or give it another label/,
    nearMiss: approvalAfterBuild(
      "",
      "- { from: ship, to: done, label: approved }\n- { from: ship, to: failed, label: rejected }",
    ),
  },
  "branching-node": {
    triggers: workflow(
      `${twoRuns}\nlint: { kind: run, run: make lint }`,
      "- { from: build, to: check }\n- { from: build, to: lint }",
    ),
    where: { needle: "{ from: build, to: lint }" },
    fix: /run build has more than one unlabelled outgoing edge.*route with a decision node/,
    nearMiss: workflow(
      `${twoRuns}\nlint: { kind: run, run: make lint }`,
      "- { from: build, to: check }\n- { from: check, to: lint }",
    ),
  },
  "decision-edges": {
    triggers: workflow(
      `build: { kind: run, run: make }\n${agentReview}`,
      "- { from: build, to: review }\n- { from: review, to: done, label: ship-it }",
    ),
    where: { needle: "review:" },
    fix: /agent decision review needs at least two outgoing labelled edges/,
    nearMiss: workflow(
      `build: { kind: run, run: make }\n${agentReview}`,
      "- { from: build, to: review }\n- { from: review, to: done, label: ship-it }\n- { from: review, to: escalated, label: ask-a-human }",
    ),
  },
  "decision-without-devbox": {
    triggers: workflow(
      "smoke: { kind: decision, evaluator: deterministic, run: ./smoke.sh }\nbuild: { kind: run, run: make }",
      "- { from: smoke, to: build, label: pass }\n- { from: smoke, to: failed, label: fail }",
    ),
    where: { needle: "smoke:" },
    fix: /deterministic decision smoke .* no DevBox \(at the run's entry\): put a run, loop or prototype node before it, or use evaluator: status/,
    nearMiss: workflow(
      "build: { kind: run, run: make }\nsmoke: { kind: decision, evaluator: deterministic, run: ./smoke.sh }",
      "- { from: build, to: smoke }\n- { from: smoke, to: done, label: pass }\n- { from: smoke, to: failed, label: fail }",
    ),
  },
  "approval-timeout-edge": {
    triggers: approvalAfterBuild(
      ", on_timeout: expired",
      "- { from: ship, to: done, label: approved }\n- { from: ship, to: failed, label: rejected }",
    ),
    where: { needle: "expired" },
    fix: /on_timeout "expired" names no outgoing edge of ship: add an edge labelled "expired" or use one of approved, rejected/,
    nearMiss: approvalAfterBuild(
      ", on_timeout: expired",
      "- { from: ship, to: done, label: approved }\n- { from: ship, to: failed, label: rejected }\n- { from: ship, to: escalated, label: expired }",
    ),
  },
  "approval-window": {
    triggers: approvalAfterBuild(", timeout: 30m", "- { from: ship, to: done, label: approved }"),
    where: { needle: "30m" },
    fix: /approval timeout 30m is outside 1h to 30d: set a timeout between 1h and 30d/,
    nearMiss: approvalAfterBuild(", timeout: 1h", "- { from: ship, to: done, label: approved }"),
  },
  "prototype-variants": {
    triggers: workflow(
      "race: { kind: prototype, brief: Build it, variants: [{ engine: claude }] }",
    ),
    where: { needle: "[{ engine" },
    fix: /prototype race has 1 variant: a race needs 2 to 6/,
    nearMiss: workflow(
      "race: { kind: prototype, brief: Build it, variants: [{ engine: claude }, { engine: codex }] }",
    ),
  },
  "loop-contract": {
    triggers: workflow(
      "fix: { kind: loop, goal: Green tests, agent: { engine: claude }, budget: { max_iterations: 5 } }",
    ),
    where: { needle: "fix:" },
    fix: /loop fix has no gates: add gates: \[\{ name, run \}\]/,
    nearMiss: workflow(
      "fix: { kind: loop, goal: Green tests, agent: { engine: claude }, budget: { max_iterations: 5 }, gates: [{ name: tests, run: npm test }] }",
    ),
  },
  "unknown-engine": {
    triggers: workflow("build: { kind: run, agent: { engine: gemini }, prompt: Build it }"),
    where: { needle: "gemini" },
    fix: /engine "gemini" is neither built in \(claude, codex\) nor declared under engines: declare it or fix the name/,
    nearMiss: yaml`
      version: 1
      name: t
      on: { label: go }
      engines:
        gemini: { command: [gemini, --prompt-file, "{prompt_file}"] }
      nodes:
        build: { kind: run, agent: { engine: gemini }, prompt: Build it }
    `,
  },
  "secret-literal": {
    triggers: workflow(
      "publish: { kind: run, run: 'npm publish --token npm_abcdefghijklmnopqrstuvwxyz0123456789' }",
    ),
    where: { needle: "npm_abcdef" },
    fix: /looks like an npm token: never commit credentials; list the secret's name under devbox.secrets.*revoke this one/,
    nearMiss: yaml`
      version: 1
      name: t
      on: { label: go }
      devbox: { secrets: [NPM_TOKEN] }
      nodes:
        publish: { kind: run, run: 'npm publish --token "$NPM_TOKEN"' }
    `,
  },
  "no-give-up-branch": {
    triggers: workflow(
      twoRuns,
      "- { from: build, to: check }\n- { from: check, to: build, back: true, max_traversals: 2 }",
    ),
    where: { needle: "{ from: check, to: build" },
    fix: /after 2 traversals .* add \{ from: check, to: escalated, label: exhausted \}/,
    severity: "warning",
    nearMiss: workflow(
      twoRuns,
      "- { from: build, to: check }\n- { from: check, to: build, back: true, max_traversals: 2 }\n- { from: check, to: escalated, label: exhausted }",
    ),
  },
  "budget-without-cost": {
    triggers: workflow(
      "fix: { kind: loop, goal: Fix it, agent: { engine: codex, model: gpt-9 }, gates: [{ name: t, run: make test }], budget: { max_iterations: 3, max_daily_cost_usd: 20 } }",
    ),
    where: { needle: "20 }" },
    fix: /model gpt-9 has no known price.*use a priced model or rely on max_iterations/,
    severity: "warning",
    nearMiss: workflow(
      "fix: { kind: loop, goal: Fix it, agent: { engine: claude, model: claude-sonnet-4-5 }, gates: [{ name: t, run: make test }], budget: { max_iterations: 3, max_daily_cost_usd: 20 } }",
    ),
  },
  "engine-without-key": {
    triggers: yaml`
      version: 1
      name: t
      on: { label: go }
      devbox: { secrets: [NPM_TOKEN] }
      nodes:
        a: { kind: run, prompt: Do it., agent: { engine: codex, model: gpt-5 } }
    `,
    where: { needle: "codex" },
    fix: /engine codex needs OPENAI_API_KEY in the DevBox.*add OPENAI_API_KEY to devbox.secrets/,
    severity: "warning",
    nearMiss: yaml`
      version: 1
      name: t
      on: { label: go }
      devbox: { secrets: [NPM_TOKEN, OPENAI_API_KEY] }
      nodes:
        a: { kind: run, prompt: Do it., agent: { engine: codex, model: gpt-5 } }
    `,
  },
  "rework-node": {
    triggers: yaml`
      version: 1
      name: t
      on: { label: go }
      nodes:
        build: { kind: run, run: make }
        ship: { kind: approval }
      edges:
        - { from: build, to: ship }
        - { from: ship, to: done, label: approved }
        - { from: ship, to: failed, label: rejected }
      rework: { node: ship }
    `,
    where: { needle: "ship }", occurrence: 2 },
    fix: /is an approval node, which does no work: re-open at a run, loop or prototype node/,
    nearMiss: yaml`
      version: 1
      name: t
      on: { label: go }
      nodes:
        build: { kind: run, run: make }
        ship: { kind: approval }
      edges:
        - { from: build, to: ship }
        - { from: ship, to: done, label: approved }
        - { from: ship, to: failed, label: rejected }
      rework: { node: build, max_rounds: 2 }
    `,
  },
  "output-writer": {
    triggers: workflow(
      "a: { kind: run, run: make, outputs: { version: { type: string } } }\nb: { kind: run, run: make, outputs: { version: { type: number } } }",
      "- { from: a, to: b }",
    ),
    where: { needle: "version: { type: number" },
    fix: /output version is already written by a: one node writes each output; rename one of them/,
    nearMiss: workflow(
      "a: { kind: run, run: make, outputs: { version: { type: string } } }\nb: { kind: run, run: make, outputs: { count: { type: number } } }",
      "- { from: a, to: b }",
    ),
  },
  "output-input": {
    triggers: workflow(
      "a: { kind: run, run: make, inputs: [version] }\nb: { kind: run, run: make, outputs: { version: { type: string } } }",
      "- { from: a, to: b }",
    ),
    where: { needle: "version] }" },
    fix: /input version of a is written by b, which never runs before a: add an edge path from b to a/,
    nearMiss: workflow(
      "a: { kind: run, run: make, outputs: { version: { type: string } } }\nb: { kind: run, run: make, inputs: [version] }",
      "- { from: a, to: b }",
    ),
  },
};

describe("rework-node", () => {
  it("points at a rework node that does not exist, with the line, and names the nodes", () => {
    const text = yaml`
      version: 1
      name: t
      on: { label: go }
      nodes:
        build: { kind: run, run: make }
      rework: { node: biuld }
    `;
    const finding = expectOne(text, "rework-node", { needle: "biuld" }, "error");
    expect(finding.message).toContain(
      'rework.node "biuld" is not a node of this workflow: did you mean "build"?',
    );
  });
});

describe("every rule", () => {
  it("has a case here", () => {
    expect(Object.keys(CASES).sort()).toEqual([...RULE_IDS].sort());
  });

  describe.each(RULE_IDS.map((rule) => [rule, CASES[rule]] as const))("%s", (rule, cases) => {
    it("reports the offending node with a message that says how to fix it", () => {
      const finding = expectOne(cases.triggers, rule, cases.where, cases.severity ?? "error");
      expect(finding.message).toMatch(cases.fix);
    });

    it("stays quiet on a near miss", () => {
      expectClean(cases.nearMiss);
    });
  });
});

describe("severity", () => {
  it("a workflow with only a warning is valid and keeps the warning", () => {
    const result = validate(CASES["no-give-up-branch"].triggers);
    expect(result.ok).toBe(true);
    expect(result.findings.map((finding) => finding.severity)).toEqual(["warning"]);
  });

  it("a workflow with a graph error is invalid even when the schema passes", () => {
    const result = validate(CASES["unknown-node"].triggers);
    expect(result.ok).toBe(false);
  });
});

describe("back-edge-cap", () => {
  it("refuses max_traversals on a forward edge, at the cap", () => {
    const text = workflow(twoRuns, "- { from: build, to: check, max_traversals: 2 }");
    const finding = expectOne(text, "back-edge-cap", { needle: "2 }" });
    expect(finding.message).toMatch(
      /caps back-edges only: add back: true, or remove max_traversals/,
    );
  });

  it("refuses a cap of 0 on a back-edge", () => {
    const text = workflow(
      twoRuns,
      "- { from: build, to: check }\n- { from: check, to: build, back: true, max_traversals: 0 }\n- { from: check, to: escalated, label: exhausted }",
    );
    expectOne(text, "back-edge-cap", { needle: "0 }" });
  });

  it("accepts a back-edge without max_traversals (default 3)", () => {
    const text = workflow(
      twoRuns,
      "- { from: build, to: check }\n- { from: check, to: build, back: true }\n- { from: check, to: escalated, label: exhausted }",
    );
    expectClean(text);
  });
});

describe("forward-cycle", () => {
  it("reports a self-loop made of a forward edge", () => {
    const text = workflow("build: { kind: run, run: make }", "- { from: build, to: build }");
    const finding = expectOne(text, "forward-cycle", { needle: "{ from: build" });
    expect(finding.message).toContain("build → build");
  });
});

describe("unknown-node", () => {
  it("refuses an edge that starts at a terminal", () => {
    const text = workflow(twoRuns, "- { from: build, to: check }\n- { from: done, to: check }");
    const finding = expectOne(text, "unknown-node", { needle: "done" });
    expect(finding.message).toMatch(
      /"done" is a terminal and has no outgoing edges: start this edge at a node/,
    );
  });

  it("lists the choices when no id is close", () => {
    const text = workflow(twoRuns, "- { from: build, to: deploy-to-production }");
    const finding = expectOne(text, "unknown-node", { needle: "deploy-to-production" });
    expect(finding.message).toMatch(/use a node id or one of done, failed, escalated/);
  });
});

describe("unreachable-node", () => {
  it("follows back-edges: a node entered only through a back-edge is reachable", () => {
    const text = workflow(
      "build: { kind: run, run: make }\nresult: { kind: decision, evaluator: status }\nretry: { kind: run, run: make clean }",
      [
        "- { from: build, to: result }",
        "- { from: result, to: done, label: succeeded }",
        "- { from: result, to: retry, label: failed, back: true, max_traversals: 2 }",
        "- { from: result, to: escalated, label: exhausted }",
        "- { from: retry, to: build }",
      ].join("\n"),
    );
    expectClean(text);
  });

  it("reports every node of an island, even one with edges between its members", () => {
    const text = workflow(
      `${twoRuns}\nlint: { kind: run, run: make lint }`,
      "- { from: check, to: lint }",
    );
    const findings = findingsOf(text, "unreachable-node");
    expect(findings.map((finding) => finding.path)).toEqual(["nodes.check", "nodes.lint"]);
  });
});

describe("approval-window", () => {
  it.each(["59m", "31d", "720h1s"])("refuses %s", (timeout) => {
    const text = approvalAfterBuild(
      `, timeout: ${timeout}`,
      "- { from: ship, to: done, label: approved }",
    );
    expectOne(text, "approval-window", { needle: timeout });
  });

  it.each(["1h", "30d", "720h", "72h"])("accepts %s", (timeout) => {
    const text = approvalAfterBuild(
      `, timeout: ${timeout}`,
      "- { from: ship, to: done, label: approved }",
    );
    expectClean(text);
  });
});

describe("prototype-variants", () => {
  it("refuses seven variants", () => {
    const variants = Array.from({ length: 7 }, () => "{ engine: claude }").join(", ");
    const text = workflow(`race: { kind: prototype, brief: Build it, variants: [${variants}] }`);
    const finding = expectOne(text, "prototype-variants", { needle: "[{ engine" });
    expect(finding.message).toContain("7 variants");
  });
});

describe("loop-contract", () => {
  it("refuses a loop without budget.max_iterations, at the budget", () => {
    const text = workflow(
      "fix: { kind: loop, goal: Green tests, agent: { engine: claude }, budget: { wall_clock: 1h }, gates: [{ name: tests, run: npm test }] }",
    );
    const finding = expectOne(text, "loop-contract", { needle: "budget" });
    expect(finding.message).toMatch(/no budget.max_iterations: set one between 1 and 50/);
  });

  it.each([0, 51])("refuses max_iterations %i, at the value", (max) => {
    const text = workflow(
      `fix: { kind: loop, goal: Green tests, agent: { engine: claude }, budget: { max_iterations: ${max} }, gates: [{ name: tests, run: npm test }] }`,
    );
    const finding = expectOne(text, "loop-contract", { needle: `${max} }` });
    expect(finding.message).toMatch(/between 1 and 50/);
  });

  it("refuses an empty gate list, at gates", () => {
    const text = workflow(
      "fix: { kind: loop, goal: Green tests, agent: { engine: claude }, budget: { max_iterations: 3 }, gates: [] }",
    );
    expectOne(text, "loop-contract", { needle: "gates" });
  });
});

describe("unknown-engine", () => {
  it("checks prototype variants too", () => {
    const text = workflow(
      "race: { kind: prototype, brief: Build it, variants: [{ engine: claude }, { engine: aidr }] }",
    );
    expectOne(text, "unknown-engine", { needle: "aidr" });
  });
});

describe("missing-label", () => {
  it("refuses an unlabelled edge out of a decision", () => {
    const text = workflow(
      "build: { kind: run, run: make }\nresult: { kind: decision, evaluator: status }",
      "- { from: build, to: result }\n- { from: result, to: done }",
    );
    expectOne(text, "missing-label", { needle: "{ from: result, to: done }" });
  });
});
