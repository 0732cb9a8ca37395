import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../github/helpers/harness.js";
import { commentOn, labeledIssue } from "../helpers/payloads.js";

/** Where a command smuggled in issue text would leave its mark, if it ever ran. */
const dir = mkdtempSync(join(tmpdir(), "cc-canary-"));
const mark = (n: number) => join(dir, `executed-${n}`);
/** The secret the DevBox holds: it must show up nowhere outside the DevBox. */
const SECRET = "canary-secret-7f3a9c21d4e8b605";

const TITLE = `Fix $(touch ${mark(1)}) and \`touch ${mark(2)}\``;
const BODY = [
  `; touch ${mark(3)}`,
  `&& touch ${mark(4)} | touch ${mark(5)}`,
  `\ntouch ${mark(6)}\n`,
  `'; touch ${mark(7)}; echo '`,
  `"$(touch ${mark(8)})"`,
  `\u202etouch ${mark(9)}\u2066 \u200b$(touch ${mark(10)})`,
].join("\n");

const WORKFLOW = `version: 1
name: careful
on: { label: clustercode }
devbox: { secrets: [DEPLOY_TOKEN] }
engines:
  stand-in:
    command: [bash, -c, 'cp "$1" PROMPT.md && cp "$CLUSTERCODE_BRIEF_FILE" BRIEF.md && echo "deploying with $DEPLOY_TOKEN" && printf "%s" "$DEPLOY_TOKEN" >&2', stand-in, "{prompt_file}"]
nodes:
  write:
    kind: run
    agent: { engine: stand-in }
    prompt: Do what the issue asks.
  leak:
    kind: run
    run: 'echo "token: $DEPLOY_TOKEN"; printf "token=%s" "\${DEPLOY_TOKEN:0:10}"; echo progress >&2; printf "%s\\n" "\${DEPLOY_TOKEN:10}"'
  check:
    kind: decision
    evaluator: agent
    question: Is it done?
    judge: { provider: anthropic, model: judge-1 }
  gate:
    kind: approval
edges:
  - { from: write, to: leak }
  - { from: leak, to: check }
  - { from: check, to: gate, label: "yes" }
  - { from: check, to: failed, label: "no" }
  - { from: gate, to: done, label: approved }
  - { from: gate, to: failed, label: rejected }
`;

describe("untrusted issue text and a DevBox secret", () => {
  let app: TestApp;
  let runId: string;
  let branch: string;
  const judged = join(dir, "judge-input.json");
  beforeAll(async () => {
    writeFileSync(
      join(dir, "judge.mjs"),
      `import { writeFileSync } from "node:fs";\nlet input = "";\nprocess.stdin.on("data", (c) => (input += c));\nprocess.stdin.on("end", () => {\n  writeFileSync(${JSON.stringify(judged)}, input);\n  console.log(JSON.stringify({ label: "yes", reasoning: "fine" }));\n});\n`,
    );
    app = await startTestApp(WORKFLOW, {
      env: {
        DEPLOY_TOKEN: SECRET,
        CLUSTERCODE_JUDGE_COMMAND: JSON.stringify(["node", join(dir, "judge.mjs")]),
      },
    });
    app.github.permissions.set("alice", "write");
    app.github.permissions.set("bob", "write");
    await app.deliver(
      "issues",
      labeledIssue(5, "alice", (p) => {
        p.issue.title = TITLE;
        p.issue.body = BODY;
      }),
    );
    const waiting = await app.waitForStatus("awaiting_input", 60_000);
    runId = waiting.state.runId;
    branch = waiting.definition.branch;
    await app.deliver(
      "issue_comment",
      commentOn(5, `/approve $(touch ${mark(11)}) ${SECRET.slice(0, 4)}`, "bob"),
    );
    await app.waitForStatus("succeeded", 60_000);
  }, 120_000);
  afterAll(async () => {
    await app?.close();
  });

  it("never executes shell text from the issue's title, body or a comment", () => {
    for (let n = 1; n <= 11; n++) expect(existsSync(mark(n)), mark(n)).toBe(false);
    // The agent got the text, as text, in its brief file (bidi and hidden characters removed).
    const brief = execFileSync("git", ["show", `${branch}:BRIEF.md`], {
      cwd: app.remote,
    }).toString();
    expect(brief).toContain(`$(touch ${mark(1)})`);
    expect(brief).toContain(`; touch ${mark(3)}`);
    expect(brief).not.toMatch(/[\u202e\u2066\u200b]/);
  });

  it("keeps the secret out of every GitHub request, log, stored record and the judge's input", async () => {
    const requests = JSON.stringify(app.github.requests.map((r) => [r.path, r.body]));
    expect(requests).not.toContain(SECRET);
    expect(requests).not.toContain(SECRET.slice(8));
    expect(JSON.stringify(app.errors)).not.toContain(SECRET);
    const stored = JSON.stringify([
      await app.host.store.getRun(runId),
      await app.host.store.listEvidence(runId),
    ]);
    expect(stored).not.toContain(SECRET);
    expect(stored).not.toContain(SECRET.slice(8));
    // The commands did print it: masked, it shows as a mask, not the value.
    expect(stored).toContain("deploying with");
    const judge = readFileSync(judged, "utf8");
    expect(judge.length).toBeGreaterThan(0);
    expect(judge).not.toContain(SECRET);
    expect(judge).not.toContain(SECRET.slice(8));
  });
});
