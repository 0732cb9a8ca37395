import { describe, expect, it } from "vitest";
import type { Effect } from "../../src/engine/model.js";
import { step } from "../../src/engine/step.js";
import { SimulatedRun, definitionOf, workflowFile, workflowOf } from "./harness.js";

const header = `version: 1
name: t
on: { label: go }
`;

function run(yaml: string, world: ConstructorParameters<typeof SimulatedRun>[1] = {}) {
  return new SimulatedRun(definitionOf(workflowOf(header + yaml)), world);
}

const ofType = <T extends Effect["type"]>(effects: Effect[], type: T) =>
  effects.filter((effect): effect is Extract<Effect, { type: T }> => effect.type === type);

describe("run nodes", () => {
  it("claims a DevBox, runs the script, checkpoints and ends done", () => {
    const sim = run(`nodes:
  build: { kind: run, run: make }
edges:
  - { from: build, to: done }
`).start();
    expect(sim.snapshot.status).toBe("succeeded");
    expect(sim.path).toEqual(["build:succeeded"]);
    const [claim] = ofType(sim.effects, "devbox.claim");
    expect(claim?.spec).toMatchObject({ branch: "clustercode/1-r1", baseBranch: "main" });
    const commands = ofType(sim.effects, "command.dispatch").map(
      (effect) => effect.request.command.type,
    );
    expect(commands).toEqual(["script", "checkpoint"]);
    expect(ofType(sim.effects, "devbox.release")).toHaveLength(1);
    expect(sim.snapshot.branchPushed).toBe(true);
  });

  it("hands the brief to commands as a file, never inside the script", () => {
    const sim = new SimulatedRun(
      definitionOf(
        workflowOf(header + 'nodes:\n  a: { kind: run, run: cat "$CLUSTERCODE_BRIEF_FILE" }\n'),
        {
          brief: "$(rm -rf /) `reboot`",
        },
      ),
    ).start();
    const [dispatch] = ofType(sim.effects, "command.dispatch");
    expect(dispatch?.request.command).toEqual({
      type: "script",
      script: 'cat "$CLUSTERCODE_BRIEF_FILE"',
    });
    expect(dispatch?.request.files?.brief).toBe("$(rm -rf /) `reboot`");
  });

  it("fails the run when a node fails and its edge does not lead to a status decision", () => {
    const sim = run(
      `nodes:
  a: { kind: run, run: "false" }
  b: { kind: run, run: "true" }
edges:
  - { from: a, to: b }
`,
      {
        exit: (request) =>
          request.command.type === "script" && request.command.script === "false" ? 1 : 0,
      },
    ).start();
    expect(sim.snapshot.status).toBe("failed");
    expect(sim.snapshot.reason).toBe("a failed");
    expect(sim.path).toEqual(["a:failed"]);
    expect(sim.snapshot.failedNode).toBe("a");
  });
});

describe("decisions and back-edges", () => {
  const retrying = `nodes:
  test: { kind: run, run: npm test }
  result: { kind: decision, evaluator: status }
edges:
  - { from: test, to: result }
  - { from: result, to: done, label: succeeded }
  - { from: result, to: test, label: failed, back: true, max_traversals: 2 }
  - { from: result, to: escalated, label: exhausted }
`;

  it("routes a status decision on the previous node's outcome", () => {
    let calls = 0;
    const sim = run(retrying, {
      exit: (request) => (request.command.type === "script" && calls++ === 0 ? 1 : 0),
    }).start();
    expect(sim.snapshot.status).toBe("succeeded");
    expect(sim.path).toEqual([
      "test:failed",
      "result:failed",
      "test:succeeded",
      "result:succeeded",
    ]);
    expect(sim.snapshot.traversals).toEqual({ "2": 1 });
  });

  it("takes the exhausted edge when a back-edge reaches its cap", () => {
    const sim = run(retrying, {
      exit: (request) => (request.command.type === "script" ? 1 : 0),
    }).start();
    expect(sim.snapshot.status).toBe("escalated");
    expect(sim.snapshot.reason).toBe("reached escalated: result → test reached its cap of 2");
    expect(sim.path.filter((visit) => visit.startsWith("test"))).toHaveLength(3);
    expect(sim.snapshot.traversals["2"]).toBe(2);
    expect(sim.snapshot.visits.at(-1)?.label).toBe("exhausted");
  });

  it("fails with back-edge-exhausted when there is no give-up branch", () => {
    const sim = run(
      retrying.replace("  - { from: result, to: escalated, label: exhausted }\n", ""),
      {
        exit: (request) => (request.command.type === "script" ? 1 : 0),
      },
    ).start();
    expect(sim.snapshot.status).toBe("failed");
    expect(sim.snapshot.reason).toBe("back-edge-exhausted: result → test reached its cap of 2");
  });

  it("routes a deterministic decision on its command's exit code", () => {
    const yaml = `nodes:
  build: { kind: run, run: make }
  check: { kind: decision, evaluator: deterministic, run: test -f out }
edges:
  - { from: build, to: check }
  - { from: check, to: done, label: pass }
  - { from: check, to: failed, label: fail }
`;
    const pass = run(yaml).start();
    expect(pass.snapshot.status).toBe("succeeded");
    const fail = run(yaml, {
      exit: (request) =>
        request.command.type === "script" && request.command.script.startsWith("test") ? 1 : 0,
    }).start();
    expect(fail.snapshot.status).toBe("failed");
    expect(fail.path).toEqual(["build:succeeded", "check:fail"]);
  });

  it("routes an agent decision on the judge's label, restricted to the outgoing labels", () => {
    const yaml = `nodes:
  build: { kind: run, run: make }
  review:
    kind: decision
    evaluator: agent
    question: Is it good?
    judge: { provider: anthropic, model: m }
edges:
  - { from: build, to: review }
  - { from: review, to: done, label: ship }
  - { from: review, to: failed, label: scrap }
`;
    const sim = run(yaml, { judge: (labels) => labels[1] ?? "" }).start();
    const [request] = ofType(sim.effects, "judge.request");
    expect(request?.labels).toEqual(["ship", "scrap"]);
    expect(sim.snapshot.status).toBe("failed");
    expect(sim.path.at(-1)).toBe("review:scrap");
    const invalid = run(yaml, { judge: () => "maybe" }).start();
    expect(invalid.snapshot.status).toBe("failed");
    expect(invalid.snapshot.reason).toContain('judge answered "maybe"');
  });
});

describe("loops", () => {
  const loop = `nodes:
  fix:
    kind: loop
    goal: Make the tests pass
    agent: { engine: claude, model: m }
    gates: [{ name: tests, run: npm test }, { name: lint, run: npm run lint }]
    budget: { max_iterations: 3 }
`;

  it("iterates until every gate passes, feeding failed gate output to the next iteration", () => {
    let testRuns = 0;
    const sim = run(loop, {
      exit: (request) =>
        request.command.type === "script" && request.command.script === "npm test" && testRuns++ < 1
          ? 1
          : 0,
    }).start();
    expect(sim.snapshot.status).toBe("succeeded");
    const agents = ofType(sim.effects, "command.dispatch").filter(
      (effect) => effect.request.command.type === "agent",
    );
    expect(agents).toHaveLength(2);
    expect(agents[1]?.request.files?.feedback).toContain("## Gate tests failed");
    const second = agents[1]?.request.command;
    expect(second?.type === "agent" ? second.prompt : "").toContain("iteration 2 of at most 3");
    expect(sim.scripts).toEqual(["npm test", "npm run lint", "npm test", "npm run lint"]);
  });

  it("ends exhausted after max_iterations and stops the run without a give-up edge", () => {
    const sim = run(loop, {
      exit: (request) => (request.command.type === "script" ? 1 : 0),
    }).start();
    expect(sim.path).toEqual(["fix:exhausted"]);
    expect(sim.snapshot.visits[0]?.reason).toBe("max_iterations (3) reached");
    expect(sim.snapshot.status).toBe("failed");
  });
});

describe("approvals", () => {
  const yaml = `nodes:
  build: { kind: run, run: make }
  ship: { kind: approval, timeout: 2h, on_timeout: expired, prevent_self_approval: true }
  deploy: { kind: run, run: ./deploy }
edges:
  - { from: build, to: ship }
  - { from: ship, to: deploy, label: approved }
  - { from: ship, to: failed, label: rejected }
  - { from: ship, to: escalated, label: expired }
`;

  it("releases the DevBox, waits, and continues in a new DevBox when approved", () => {
    const sim = run(yaml).start();
    expect(sim.snapshot.status).toBe("awaiting_input");
    expect(sim.snapshot.devbox).toBeUndefined();
    const timer = ofType(sim.effects, "timer.set").find((effect) =>
      effect.timerId.startsWith("approval"),
    );
    expect(timer?.dueAt).toBe(sim.snapshot.visits[1]!.startedAt + 2 * 3_600_000);
    sim.send({ type: "approval.answer", decision: "approved", actor: "bob", at: sim.tick() });
    sim.drain();
    expect(sim.snapshot.status).toBe("succeeded");
    expect(ofType(sim.effects, "devbox.claim")).toHaveLength(2);
    expect(ofType(sim.effects, "timer.cancel").map((effect) => effect.timerId)).toContain(
      timer?.timerId,
    );
  });

  it("refuses self-approval and answers nobody asked for", () => {
    const sim = run(yaml).start();
    const result = step(sim.definition, sim.snapshot, {
      type: "approval.answer",
      decision: "approved",
      actor: "alice",
      at: 1,
    });
    expect(result.refused).toContain("does not allow self-approval");
    expect(result.snapshot).toBe(sim.snapshot);
    const early = run(yaml, { pause: (effect) => effect.type === "devbox.claim" });
    early.start();
    expect(
      step(early.definition, early.snapshot, {
        type: "approval.answer",
        decision: "approved",
        actor: "bob",
        at: 1,
      }).refused,
    ).toBe("no approval is waiting in this run");
  });

  it("takes the on_timeout label when the window lapses", () => {
    const sim = run(yaml).start();
    const timerId = Object.keys(sim.snapshot.timers).find((id) =>
      id.startsWith("approval"),
    ) as string;
    sim.send({ type: "timer.fired", timerId, at: sim.tick() });
    expect(sim.snapshot.status).toBe("escalated");
    expect(sim.path.at(-1)).toBe("ship:expired");
  });
});

describe("lost DevBoxes, retry and cancel", () => {
  const yaml = (idempotent: boolean) => `nodes:
  deploy: { kind: run, run: ./deploy, idempotent: ${idempotent} }
`;
  const lose = (sim: SimulatedRun) => {
    const devbox = sim.snapshot.devbox?.id as string;
    sim.send({ type: "devbox.lost", devboxId: devbox, reason: "SpotInterruption", at: sim.tick() });
    return sim;
  };

  it("re-runs an idempotent node once in a new DevBox, then waits", () => {
    const sim = run(yaml(true), { pause: (effect) => effect.type === "command.dispatch" }).start();
    lose(sim).drain();
    expect(sim.path).toEqual(["deploy:lost", "deploy:…"]);
    expect(sim.snapshot.visits[1]?.attempt).toBe(2);
    expect(ofType(sim.effects, "devbox.claim")).toHaveLength(2);
    lose(sim);
    expect(sim.snapshot.status).toBe("awaiting_input");
    expect(sim.snapshot.awaiting).toEqual({ kind: "lost", node: "deploy" });
  });

  it("waits on a non-idempotent node until resolve, and resolve routes", () => {
    const sim = run(yaml(false), { pause: (effect) => effect.type === "command.dispatch" }).start();
    lose(sim);
    expect(sim.snapshot.status).toBe("awaiting_input");
    expect(ofType(sim.effects, "devbox.claim")).toHaveLength(1);
    sim.send({ type: "run.resolve", outcome: "succeeded", actor: "ops", at: sim.tick() });
    expect(sim.snapshot.status).toBe("succeeded");
    expect(sim.path).toEqual(["deploy:succeeded"]);
  });

  it("retries a failed run at the failed node with a new attempt and counters kept", () => {
    let fail = true;
    const sim = run(
      `nodes:
  a: { kind: run, run: a }
  r: { kind: decision, evaluator: status }
  b: { kind: run, run: b }
edges:
  - { from: a, to: r }
  - { from: r, to: a, label: failed, back: true, max_traversals: 1 }
  - { from: r, to: b, label: succeeded }
  - { from: r, to: failed, label: exhausted }
`,
      {
        exit: (request) =>
          request.command.type === "script" && request.command.script === "b" && fail ? 1 : 0,
      },
    ).start();
    expect(sim.snapshot.status).toBe("failed");
    expect(sim.snapshot.failedNode).toBe("b");
    fail = false;
    sim.send({ type: "run.retry", actor: "bob", at: sim.tick() });
    sim.drain();
    expect(sim.snapshot.status).toBe("succeeded");
    expect(sim.snapshot.visits.at(-1)).toMatchObject({
      node: "b",
      attempt: 2,
      outcome: "succeeded",
    });
  });

  it("cancels: the DevBox is released, timers cancelled, the run ends cancelled", () => {
    const sim = run(yaml(true), { pause: (effect) => effect.type === "command.dispatch" }).start();
    const effects = sim.send({ type: "run.cancel", actor: "bob", at: sim.tick() });
    expect(sim.snapshot.status).toBe("cancelled");
    expect(effects.map((effect) => effect.type)).toEqual(
      expect.arrayContaining(["devbox.release", "timer.cancel", "evidence"]),
    );
    expect(
      step(sim.definition, sim.snapshot, { type: "run.cancel", actor: "bob", at: 1 }).refused,
    ).toContain("already ended");
  });

  it("ignores stale results and timers", () => {
    const sim = run(yaml(true), { pause: (effect) => effect.type === "command.dispatch" }).start();
    const result = step(sim.definition, sim.snapshot, {
      type: "command.finished",
      devboxId: "d1",
      result: { commandId: "c99", exitCode: 0, output: "", durationMs: 1 },
      at: 1,
    });
    expect(result.refused).toBe("stale command result");
    expect(
      step(sim.definition, sim.snapshot, { type: "timer.fired", timerId: "nope", at: 1 }).refused,
    ).toBeDefined();
  });
});

describe("prototypes", () => {
  const yaml = (select: string) => `nodes:
  design:
    kind: prototype
    brief: Sketch it
    variants: [{ engine: claude }, { engine: codex }, { engine: claude, model: other }]
    gates: [{ name: ok, run: test -s DESIGN.md }]
    select: ${select}
    judge: { provider: anthropic, model: m }
  build: { kind: run, run: make }
edges:
  - { from: design, to: build }
`;

  it("select first: the first variant to pass wins, the others are cancelled", () => {
    // Variant 2's DevBox answers first; variant 1 is still working.
    const sim = run(yaml("first"), { pause: () => true }).start();
    const claims = ofType(sim.effects, "devbox.claim");
    expect(claims.map((claim) => claim.spec.branch)).toEqual([
      "clustercode/1-r1-v1",
      "clustercode/1-r1-v2",
      "clustercode/1-r1-v3",
    ]);
    const second = claims[1]!.devboxId;
    let effects = sim.send({ type: "devbox.ready", devboxId: second, ok: true, at: sim.tick() });
    for (let i = 0; i < 3; i++) {
      const dispatch = ofType(effects, "command.dispatch")[0]!;
      effects = sim.send({
        type: "command.finished",
        devboxId: second,
        result: {
          commandId: dispatch.request.commandId,
          exitCode: 0,
          output: "",
          durationMs: 5,
          sha: "s2",
        },
        at: sim.tick(),
      });
    }
    // The run branch keeps its name: the winner's head is moved onto it, by an effect.
    expect(sim.snapshot.branch).toBe("clustercode/1-r1");
    expect(sim.snapshot.lastSha).toBe("s2");
    expect(ofType(effects, "branch.move")).toEqual([
      expect.objectContaining({
        branch: "clustercode/1-r1",
        from: "clustercode/1-r1-v2",
        sha: "s2",
      }),
    ]);
    // Every DevBox of the race is released, the winner's too (its branch stays as evidence).
    const released = ofType(effects, "devbox.release").map((effect) => effect.devboxId);
    expect(released.sort()).toEqual(claims.map((claim) => claim.devboxId).sort());
    // The next node's DevBox checks out the run branch, after the move, and pushes there.
    const types = effects.map((effect) => effect.type);
    expect(types.indexOf("branch.move")).toBeLessThan(types.indexOf("devbox.claim"));
    expect(ofType(effects, "devbox.claim").map((claim) => claim.spec)).toEqual([
      expect.objectContaining({ branch: "clustercode/1-r1", baseBranch: "clustercode/1-r1" }),
    ]);
    expect(sim.snapshot.devbox?.branch).toBe("clustercode/1-r1");
    expect(sim.path).toEqual(["design:succeeded", "build:…"]);
  });

  it("select judge: the judge's pick is moved onto the run branch", () => {
    const sim = run(yaml("judge"), { judge: (labels) => labels[2] ?? "" }).start();
    const [request] = ofType(sim.effects, "judge.request");
    expect(request?.candidates?.map((candidate) => candidate.label)).toEqual(["v1", "v2", "v3"]);
    expect(sim.snapshot.status).toBe("succeeded");
    expect(sim.snapshot.branch).toBe("clustercode/1-r1");
    expect(ofType(sim.effects, "branch.move")).toEqual([
      expect.objectContaining({ branch: "clustercode/1-r1", from: "clustercode/1-r1-v3" }),
    ]);
    // The variants that passed and lost the pick are recorded passed, not cancelled.
    const [table] = sim.effects.flatMap((effect) =>
      effect.type === "evidence" && effect.entry.kind === "prototype.variants"
        ? [effect.entry.variants as { verdict: string }[]]
        : [],
    );
    expect(table?.map((variant) => variant.verdict)).toEqual(["passed", "passed", "won"]);
  });
});

describe("the lifecycle example", () => {
  it("runs to its approval, then to done once approved", () => {
    const sim = new SimulatedRun(
      definitionOf(workflowFile("workflows-schema/examples/lifecycle.yml")),
      {
        exit: (request) =>
          request.command.type === "script" && request.command.script.startsWith("test -s incident")
            ? 1
            : 0,
      },
    ).start();
    expect(sim.snapshot.status).toBe("awaiting_input");
    expect(sim.snapshot.awaiting).toMatchObject({ kind: "approval", node: "deploy-approval" });
    sim.send({ type: "approval.answer", decision: "approved", actor: "bob", at: sim.tick() });
    sim.drain();
    expect(sim.snapshot.status).toBe("succeeded");
    expect(sim.path.slice(-4)).toEqual([
      "deploy-approval:approved",
      "deploy:succeeded",
      "monitor:succeeded",
      "incident:fail",
    ]);
  });
});
