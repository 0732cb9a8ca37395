import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { CommandJudge } from "../../src/runtime/judge.js";
import type { JudgeRequest } from "../../src/runtime/judge.js";

const SCHEMA = JSON.parse(
  readFileSync(
    new URL("../../workflows-schema/judge-command.schema.json", import.meta.url),
    "utf8",
  ),
) as { $defs: { stdin: object; stdout: object } };

/** A judge program that keeps what it read and answers with `answer`. */
function judgeProgram(answer: object): { argv: string[]; input: string } {
  const dir = mkdtempSync(join(tmpdir(), "judge-command-"));
  const input = join(dir, "stdin.json");
  const program = join(dir, "my-judge");
  writeFileSync(program, `#!/bin/sh\ncat > '${input}'\necho '${JSON.stringify(answer)}'\n`);
  chmodSync(program, 0o755);
  return { argv: [program], input };
}

const request: JudgeRequest = {
  type: "judge.request",
  seq: 4,
  requestId: "r1/4",
  node: "review",
  question: "Is it ready?",
  labels: ["ready", "needs-work"],
  judge: { provider: "anthropic", model: "claude-sonnet-4-5" },
  branch: "clustercode/local-r1",
  baseBranch: "main",
};

describe("the judge command", () => {
  it("reads stdin and prints stdout as the committed JSON Schema says, and is credited to itself", async () => {
    const ajv = new Ajv2020({ strict: false });
    const stdout = { label: "ready", reasoning: "Tests pass." };
    expect(ajv.validate(SCHEMA.$defs.stdout, stdout), ajv.errorsText()).toBe(true);
    const { argv, input } = judgeProgram(stdout);
    const verdict = await new CommandJudge(argv).decide(request, {
      brief: "Fix the bug",
      diff: "diff --git a/x b/x",
      evidence: [],
    });
    const read = JSON.parse(readFileSync(input, "utf8")) as unknown;
    expect(ajv.validate(SCHEMA.$defs.stdin, read), ajv.errorsText()).toBe(true);
    // Not the anthropic model the workflow declared: the command answered.
    expect(verdict).toEqual({
      label: "ready",
      reasoning: "Tests pass.",
      provider: "command",
      model: "my-judge",
    });
  });

  it("a printed answer outside the schema fails the judging, saying why", async () => {
    const ajv = new Ajv2020({ strict: false });
    const bad = { verdict: "ready" };
    expect(ajv.validate(SCHEMA.$defs.stdout, bad)).toBe(false);
    const { argv } = judgeProgram(bad);
    await expect(
      new CommandJudge(argv).decide(request, { brief: "", evidence: [] }),
    ).rejects.toMatchObject({ code: "invalid_verdict" });
  });
});
