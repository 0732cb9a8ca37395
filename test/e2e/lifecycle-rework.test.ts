/**
 * The ten-node lifecycle end to end through the GitHub app, its DevBoxes sandboxed as users run
 * them (each installs a real dependency from the registry), with the real Claude Code CLI (the
 * pinned devDependency) as every agent and a scripted model behind a loopback fake of the
 * Messages API that does only what it is told. The review's judge asks for a regression test;
 * the implementation loop, entered again, is told why only through its feedback file, and the
 * model writes the test only when it reads that request there. The run succeeds, and its pull
 * request's head is the run branch.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CheckSuiteCompletedEvent } from "@octokit/webhooks-types";
import { isFinal, type RunSnapshot, type RunStatus } from "../../src/engine/model.js";
import { RunRepository } from "../../src/store/run-repository.js";
import { startTestApp, type TestApp } from "../github/helpers/harness.js";
import { commentOn, labeledIssue, OWNER, payloadOf, REPO, reviewOf } from "../helpers/payloads.js";
import { REGISTRY_DEPENDENCY, registryLock } from "../helpers/registry-project.js";
import { FakeProviders, type ScriptedBlock } from "./fake-providers.js";

const ROOT = join(import.meta.dirname, "..", "..");
const BIN = join(ROOT, "node_modules", ".bin");

/** What the judge asks for the first time it reviews, and what the agent must be told. */
const ASK = "Add a regression test for greet() in test/regression.test.js.";

const GREETING = "module.exports.greet = (name) => `Hello, ${name}!`;\n";
/** What a reviewer asks of the pull request once the run succeeded, and the agent's answer. */
const REVIEW_ASK = "Greet an empty name as World.";
const CI_FAILURE = "greet('') says Hello, !";
const GREETING_2 = 'module.exports.greet = (name) => `Hello, ${name || "World"}!`;\n';
const REGRESSION = `const assert = require("node:assert");
const { greet } = require("../src/greeting.js");
assert.strictEqual(greet("Ada"), "Hello, Ada!");
`;

/**
 * The lifecycle example with only Claude Code as an agent (its design race is two Claude
 * models, not Claude and Codex) and the provider's key and URL among the DevBox's secrets. The
 * ten nodes, their edges and the budgets are the example's.
 */
function lifecycle(): string {
  const example = readFileSync(join(ROOT, "workflows-schema/examples/lifecycle.yml"), "utf8");
  const changes: [string, string][] = [
    ["{ engine: codex, model: gpt-5-codex }", "{ engine: claude, model: claude-sonnet-4-5 }"],
    ["secrets: [NPM_TOKEN]", "secrets: [NPM_TOKEN, ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL]"],
    // Reviews and CI on the pull request send a succeeded run back to the implementation loop.
    ["approvers:", "rework: { node: implement, max_rounds: 1 }\napprovers:"],
  ];
  return changes.reduce((text, [from, to]) => {
    if (!text.includes(from)) throw new Error(`lifecycle.yml no longer has ${from}`);
    return text.replace(from, to);
  }, example);
}

/** What the scripted model saw: each task it was given and each feedback file it read. */
const seen: { tasks: string[]; feedback: string[] } = { tasks: [], feedback: [] };

type Block = { type: string; text?: string; id?: string; name?: string } & Record<string, unknown>;
type Message = { role: string; content: string | Block[] };

const blocksOf = (message: Message | undefined): Block[] =>
  message === undefined
    ? []
    : typeof message.content === "string"
      ? [{ type: "text", text: message.content }]
      : message.content;

/** The text of a message's text blocks, or of a tool result's content. */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return (content as Block[])
    .map((block) => (block.type === "tool_result" ? textOf(block.content) : (block.text ?? "")))
    .join("\n");
}

let calls = 0;
const tool = (name: string, input: Record<string, unknown>): ScriptedBlock[] => [
  { type: "tool_use", id: `toolu_scripted_${++calls}`, name, input },
];
const say = (text: string): ScriptedBlock[] => [{ type: "text", text }];

/**
 * A model that does what it is told and nothing else. Told to read a task file, it reads it;
 * the task decides the one file it writes. A loop entered again is told its feedback is in
 * CLUSTERCODE_FEEDBACK_FILE, so it reads that file, and writes the regression test only when
 * the file asks for one.
 */
function scriptedModel(body: Record<string, unknown>): ScriptedBlock[] | undefined {
  // Claude Code's side calls (titles, quota probes) carry no tools: the default answer.
  if (!Array.isArray(body.tools) || body.tools.length === 0) return undefined;
  const messages = body.messages as Message[];
  // Claude Code says it in the first message, or for some models in the system prompt.
  const cwd = /Primary working directory: ([^\s\\"]+)/.exec(JSON.stringify(body))?.[1];
  // A call that does not say where it works (a side call with tools) gets the default answer.
  if (cwd === undefined) return undefined;
  const write = (path: string, content: string) =>
    tool("Write", { file_path: join(cwd, path), content });
  const last = blocksOf(messages.at(-1));
  // Claude Code folds a turn's tool calls into one message and their results into the next:
  // the newest result is the last.
  const result = last.findLast((block) => block.type === "tool_result");
  if (result === undefined) {
    const task = /Read the task in the file (\S+) and carry it out/.exec(textOf(last))?.[1];
    return task === undefined ? say("I was not given a task.") : tool("Read", { file_path: task });
  }
  const call = messages
    .flatMap(blocksOf)
    .find((block) => block.type === "tool_use" && block.id === result.tool_use_id);
  const output = textOf(result.content);
  switch (call?.name) {
    case "Read": {
      if (String((call.input as { file_path?: string }).file_path).endsWith("src/greeting.js"))
        return write("src/greeting.js", GREETING_2);
      seen.tasks.push(output);
      if (output.includes("write the requirements down"))
        return write("REQUIREMENTS.md", "greet(name) says hello to name.\n");
      if (output.includes("Propose a design")) return write("DESIGN.md", "One function.\n");
      if (!output.includes("Implement DESIGN.md")) return say("Nothing I know how to do.");
      if (output.includes("CLUSTERCODE_FEEDBACK_FILE"))
        return tool("Bash", { command: 'cat "$CLUSTERCODE_FEEDBACK_FILE"' });
      return write("src/greeting.js", GREETING);
    }
    case "Bash":
      seen.feedback.push(output);
      // The reviewer's request and CI's failure ask for the same fix.
      // Claude Code overwrites only a file it has read: read it first.
      if (output.includes(REVIEW_ASK) || output.includes(CI_FAILURE))
        return tool("Read", { file_path: join(cwd, "src/greeting.js") });
      return /regression test/i.test(output)
        ? write("test/regression.test.js", REGRESSION)
        : say("The feedback asks for nothing I can do.");
    default:
      return say("Done.");
  }
}

/**
 * The judge: picks the first variant of a design race; on review, approves only a diff that
 * adds the regression test, and otherwise asks for it. Keeps every request it was given.
 */
const JUDGE = `import { appendFileSync, readFileSync } from "node:fs";
const request = JSON.parse(readFileSync(0, "utf8"));
appendFileSync(process.argv[2], JSON.stringify(request) + "\\n");
let verdict = { label: request.labels[0], reasoning: "the first design will do" };
if (request.labels.includes("needs-changes")) {
  verdict = (request.context.diff ?? "").includes("test/regression.test.js")
    ? { label: "approved", reasoning: "greet() is covered by a regression test" }
    : { label: "needs-changes", reasoning: ${JSON.stringify(ASK)} };
}
process.stdout.write(JSON.stringify(verdict));
`;

/** A HOME for Claude Code with its background traffic off: the network is closed. */
function quietHome(root: string): string {
  const home = join(root, "home");
  mkdirSync(join(home, ".claude"), { recursive: true });
  const env = {
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_ERROR_REPORTING: "1",
  };
  writeFileSync(join(home, ".claude", "settings.json"), JSON.stringify({ env }));
  return home;
}

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    stdio: "pipe",
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "t",
      GIT_AUTHOR_EMAIL: "t@e",
      GIT_COMMITTER_NAME: "t",
      GIT_COMMITTER_EMAIL: "t@e",
    },
  }).trim();

/** Adds the project the lifecycle's commands expect to the remote's main. */
function seedProject(remote: string, root: string): void {
  const work = join(root, "seed");
  git(root, "clone", "--quiet", remote, work);
  const files: Record<string, string> = {
    // A real dependency: each DevBox's `npm ci` installs it from the registry through the
    // hub's egress proxy, and the tests fail without it.
    "package.json": JSON.stringify({
      name: "demo",
      version: "1.0.0",
      dependencies: REGISTRY_DEPENDENCY,
      scripts: {
        test: "node -e \"require('is-number')\" && node src/greeting.js && if [ -f test/regression.test.js ]; then node test/regression.test.js; fi",
        lint: "node -e 0",
      },
    }),
    "package-lock.json": registryLock("demo"),
    "scripts/deploy.sh": "#!/usr/bin/env bash\necho deployed > DEPLOYED\n",
    "scripts/check-incidents.sh": "#!/usr/bin/env bash\ntrue\n",
  };
  mkdirSync(join(work, "scripts"));
  for (const [name, content] of Object.entries(files))
    writeFileSync(join(work, name), content, { mode: 0o755 });
  git(work, "add", "-A");
  git(work, "commit", "--quiet", "-m", "the project");
  git(work, "push", "--quiet", "origin", "main");
}

/** Waits (four minutes at most) until the run waits for an answer or has ended; its status. */
async function settled(app: TestApp): Promise<string> {
  const deadline = Date.now() + 240_000;
  for (;;) {
    const runs = await app.host.store.listRuns(`${OWNER}/${REPO}`, { limit: Infinity });
    const status = runs[0]?.status;
    if (status === "awaiting_input" || (status !== undefined && isFinal(status as RunStatus)))
      return status;
    if (Date.now() > deadline) {
      const visits = runs[0] === undefined ? [] : await app.host.store.listEvidence(runs[0].runId);
      throw new Error(
        `the run is still ${status ?? "not there"}: ${JSON.stringify(visits.slice(-8))}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The run's last evidence, to say why it is where it is when a test did not expect it. */
async function story(app: TestApp): Promise<string> {
  const [run] = await app.host.store.listRuns(`${OWNER}/${REPO}`, { limit: Infinity });
  const evidence = run === undefined ? [] : await app.host.store.listEvidence(run.runId);
  return JSON.stringify(evidence.slice(-6).map((e) => e.entry)).slice(0, 6000);
}

/** Waits (four minutes at most) until the run has more than `visits` visits and has ended. */
async function finished(app: TestApp, visits: number): Promise<RunSnapshot> {
  const deadline = Date.now() + 240_000;
  for (;;) {
    const [run] = await app.host.store.listRuns(`${OWNER}/${REPO}`, { limit: Infinity });
    const loaded =
      run === undefined ? undefined : await new RunRepository(app.host.store).get(run.runId);
    const state = loaded?.document.state;
    if (state !== undefined && state.visits.length > visits && isFinal(state.status)) {
      await app.host.idle();
      return state;
    }
    if (Date.now() > deadline) throw new Error(`the run is still ${state?.status ?? "not there"}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** CI's check suite failed on `sha` of `branch` (GitHub Actions'). */
function suiteFailed(branch: string, sha: string): CheckSuiteCompletedEvent {
  return payloadOf<CheckSuiteCompletedEvent>("check_suite", "completed", (p) => {
    p.check_suite.id = 5001;
    p.check_suite.head_branch = branch;
    p.check_suite.head_sha = sha;
    p.check_suite.conclusion = "failure";
    if (p.check_suite.app !== null) p.check_suite.app.slug = "github-actions";
    p.check_suite.pull_requests = [];
  });
}

const providers = new FakeProviders(scriptedModel);
let baseUrl: string;
let root: string;
beforeAll(async () => {
  baseUrl = await providers.listen();
  root = mkdtempSync(join(tmpdir(), "cc-rework-"));
});
afterAll(async () => {
  await providers.close();
  rmSync(root, { recursive: true, force: true });
});

describe("the ten-node lifecycle with Claude Code and a scripted model", () => {
  it("sandboxed, with a real dependency: reworks on the judge's request, then on a failing check and a review sent together, and succeeds with one PR whose head is the run branch", async () => {
    const judged = join(root, "judged.jsonl");
    writeFileSync(join(root, "judge.mjs"), JUDGE);
    const app = await startTestApp(lifecycle(), {
      devboxes: "processes",
      env: {
        PATH: `${BIN}:${process.env.PATH ?? ""}`,
        HOME: quietHome(root),
        ANTHROPIC_API_KEY: "sk-ant-lifecycle-test",
        ANTHROPIC_BASE_URL: baseUrl,
        NPM_TOKEN: "npm-token-for-the-test",
        // A network that re-signs TLS (as this machine's does) is trusted as the host trusts it.
        ...(process.env.NODE_EXTRA_CA_CERTS === undefined
          ? {}
          : { NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS }),
        CLUSTERCODE_JUDGE_COMMAND: JSON.stringify(["node", join(root, "judge.mjs"), judged]),
      },
    });
    try {
      seedProject(app.remote, root);
      app.github.permissions.set("alice", "write");
      app.github.permissions.set("bob", "write");
      app.github.teams.set("acme/release", new Set(["bob"]));
      await app.deliver(
        "issues",
        labeledIssue(7, "alice", (p) => {
          p.issue.title = "Greet people";
          p.issue.body = "Add greet(name).";
        }),
      );
      // A run that went wrong ends instead of waiting: say so now, not after a timeout.
      expect(await settled(app)).toBe("awaiting_input");
      const waiting = await app.waitForStatus("awaiting_input");
      expect(waiting.state.visits.at(-1)?.node).toBe("deploy-approval");
      await app.deliver("issue_comment", commentOn(7, "/approve ship it", "bob"));
      const { definition, state } = await app.waitForStatus("succeeded", 30_000);

      expect(state.status).toBe("succeeded");
      expect(state.visits.map((visit) => `${visit.node}:${visit.outcome}`)).toEqual([
        "requirements:succeeded",
        "design:succeeded",
        "implement:succeeded",
        "test:succeeded",
        "test-result:succeeded",
        "review:needs-changes",
        "implement:succeeded",
        "test:succeeded",
        "test-result:succeeded",
        "review:approved",
        "deploy-approval:approved",
        "deploy:succeeded",
        "monitor:succeeded",
        "incident:fail",
      ]);

      // The loop's first visit was told nothing more; its second was told where the feedback
      // is, and the file it read there held the judge's reasoning.
      const implement = seen.tasks.filter((task) => task.includes("Implement DESIGN.md"));
      expect(implement).toHaveLength(2);
      expect(implement[0]).not.toContain("CLUSTERCODE_FEEDBACK_FILE");
      expect(implement[1]).toContain("This node was entered again.");
      expect(implement[1]).not.toContain("regression");
      expect(seen.feedback).toHaveLength(1);
      expect(seen.feedback[0]).toContain("needs-changes");
      expect(seen.feedback[0]).toContain(ASK);

      // The judge saw no regression test the first time and the agent's the second.
      const reviews = readFileSync(judged, "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as { labels: string[]; context: { diff?: string } })
        .filter((request) => request.labels.includes("needs-changes"));
      expect(reviews).toHaveLength(2);
      expect(reviews[0]?.context.diff).toContain("src/greeting.js");
      expect(reviews[0]?.context.diff).not.toContain("test/regression.test.js");
      expect(reviews[1]?.context.diff).toContain("test/regression.test.js");

      // The run branch holds the fix and the regression test, and its head is the run's.
      const branch = definition.branch;
      expect(git(app.remote, "show", `${branch}:test/regression.test.js`) + "\n").toBe(REGRESSION);
      expect(git(app.remote, "show", `${branch}:src/greeting.js`) + "\n").toBe(GREETING);
      const head = git(app.remote, "rev-parse", `refs/heads/${branch}`);
      expect(state.lastSha).toBe(head);

      // One pull request, whose head is the run branch at that commit.
      expect(app.github.pulls).toHaveLength(1);
      const number = app.github.pulls[0]?.number ?? 0;
      // As the API serves it: the fake reads the head's commit from the remote repository.
      const [status, pull] = app.github.answer(
        "GET",
        `/repos/${OWNER}/${REPO}/pulls/${number}`,
        "",
      );
      expect(status).toBe(200);
      expect(pull).toMatchObject({ head: { ref: branch, sha: head }, base: { ref: "main" } });
      expect(
        app.github.checkRuns.find(
          (run) => run.external_id === state.runId && run.head_sha === head,
        ),
      ).toMatchObject({ conclusion: "success" });

      // Then, with no pause between them, CI fails on that head and a reviewer asks for a
      // change: the first to arrive re-opens the run (its one rework round), the other is
      // refused with the reason, and the run succeeds again on its branch.
      app.github.suiteRuns.set(5001, [
        {
          id: 7001,
          name: "test (ubuntu)",
          conclusion: "failure",
          html_url: null,
          output: { title: CI_FAILURE, summary: "", annotations_count: 0 },
        },
      ]);
      await Promise.all([
        app.deliver("check_suite", suiteFailed(branch, head)),
        app.deliver(
          "pull_request_review",
          reviewOf(number, branch, "bob", (p) => {
            p.review.state = "changes_requested";
            p.review.body = REVIEW_ASK;
            p.review.commit_id = head;
          }),
        ),
      ]);
      expect(await settled(app), await story(app)).toBe("awaiting_input");
      await app.deliver("issue_comment", commentOn(7, "/approve ship it again", "bob"));
      const reworked = await finished(app, state.visits.length);
      expect(reworked.status).toBe("succeeded");
      expect(
        reworked.visits.slice(state.visits.length).map((visit) => `${visit.node}:${visit.outcome}`),
      ).toEqual([
        "implement:succeeded",
        "test:succeeded",
        "test-result:succeeded",
        "review:approved",
        "deploy-approval:approved",
        "deploy:succeeded",
        "monitor:succeeded",
        "incident:fail",
      ]);
      expect(seen.feedback).toHaveLength(2);
      expect(seen.feedback[1]).toMatch(/Greet an empty name as World\.|greet\(''\) says Hello, !/);
      const kinds = (await app.host.store.listEvidence(state.runId)).map(
        (record) => (record.entry as { kind: string }).kind,
      );
      expect(kinds.filter((kind) => kind === "rework.started")).toHaveLength(1);
      expect(kinds.filter((kind) => kind === "rework.refused")).toHaveLength(1);
      expect(git(app.remote, "show", `${branch}:src/greeting.js`) + "\n").toBe(GREETING_2);
      const newHead = git(app.remote, "rev-parse", `refs/heads/${branch}`);
      expect(reworked.lastSha).toBe(newHead);
      expect(app.github.pulls).toHaveLength(1);
      expect(
        app.github.answer("GET", `/repos/${OWNER}/${REPO}/pulls/${number}`, "")[1],
      ).toMatchObject({ head: { ref: branch, sha: newHead } });
      expect(
        app.github.checkRuns.find(
          (run) => run.external_id === state.runId && run.head_sha === newHead,
        ),
      ).toMatchObject({ conclusion: "success" });

      // Every agent turn was Claude Code's, through the hub's proxy with the real key.
      const turns = providers.calls("/v1/messages");
      expect(turns.length).toBeGreaterThan(0);
      expect(new Set(turns.map((call) => call.headers["x-api-key"]))).toEqual(
        new Set(["sk-ant-lifecycle-test"]),
      );
      expect(app.github.problems).toEqual([]);
      expect(app.errors).toEqual([]);
    } finally {
      await app.close();
    }
  }, 400_000);
});
