import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseCommand } from "../../src/github/handlers/commands.js";
import { parseDuration, DURATION_PATTERN } from "../../src/workflow/duration.js";
import { parseWorkflow } from "../../src/workflow/parse.js";
import { runs, SOAK_TIMEOUT } from "./fuzz-size.js";

const WORDS = ["approve", "reject", "cancel", "retry", "resolve", "clustercode"];

describe("the comment-command parser under fuzzing", { timeout: SOAK_TIMEOUT }, () => {
  it("never throws, and answers with a known command kind or nothing", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 300 }), (body) => {
        const command = parseCommand(body);
        if (command !== undefined) {
          expect([
            "run",
            "status",
            "approve",
            "reject",
            "cancel",
            "retry",
            "resolve",
            "invalid",
          ]).toContain(command.kind);
        }
      }),
      { numRuns: runs(1_000, 100_000) },
    );
  });

  it("takes a command word only when whitespace or the line's end follows it (else at most a reply)", () => {
    const glued = fc
      .string({ unit: "binary", minLength: 1, maxLength: 20 })
      .filter((rest) => !/^\s/.test(rest));
    fc.assert(
      fc.property(fc.constantFrom(...WORDS), glued, (word, rest) => {
        expect([undefined, "invalid"]).toContain(parseCommand(`/${word}${rest}`)?.kind);
      }),
      { numRuns: runs(1_000, 50_000) },
    );
  });

  it("reads the note after /approve as it was typed, whatever it holds", () => {
    const note = fc
      .string({ unit: "binary", minLength: 1, maxLength: 80 })
      .filter((text) => !/[\r\n]/.test(text) && text.trim() !== "");
    fc.assert(
      fc.property(note, (text) => {
        expect(parseCommand(`/approve ${text}`)).toEqual({ kind: "approve", note: text.trim() });
      }),
      { numRuns: runs(500, 50_000) },
    );
  });
});

describe("the duration and cron parsers under fuzzing", { timeout: SOAK_TIMEOUT }, () => {
  it("reads every duration the pattern accepts as a sum of its parts", () => {
    const part = fc.tuple(fc.nat({ max: 10_000 }), fc.constantFrom("s", "m", "h", "d"));
    const ms = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
    fc.assert(
      fc.property(fc.array(part, { minLength: 1, maxLength: 5 }), (parts) => {
        const text = parts.map(([n, unit]) => `${n}${unit}`).join("");
        expect(DURATION_PATTERN.test(text)).toBe(true);
        expect(parseDuration(text)).toBe(parts.reduce((sum, [n, unit]) => sum + n * ms[unit], 0));
      }),
      { numRuns: runs(500, 50_000) },
    );
  });

  it("gives a finding, never a crash, for any timeout or cron a workflow writes", () => {
    const text = fc.string({ unit: "grapheme-ascii", maxLength: 30 }).map((s) => JSON.stringify(s));
    fc.assert(
      fc.property(text, text, (timeout, cron) => {
        const result = parseWorkflow(
          `version: 1\nname: x\non: { schedule: [{ cron: ${cron} }] }\nnodes:\n  a: { kind: run, run: "true", timeout: ${timeout} }\n`,
        );
        if (!result.ok) expect(result.findings.every((f) => f.line >= 1)).toBe(true);
      }),
      { numRuns: runs(300, 20_000) },
    );
  });
});
