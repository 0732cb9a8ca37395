/**
 * What a command prints reaches `clustercode run`, `log` and `log --follow` without its
 * terminal control sequences: no clipboard write (OSC 52), no cursor movement (CSI), no hidden
 * link (OSC 8), so it cannot overprint the CLI's own lines; ordinary output reads as before.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { EvidenceNarrator, renderRecord } from "../../src/cli/evidence-narrator.js";
import { outputLines } from "../../src/cli/follow-run.js";
import { LiveOutput } from "../../src/cli/live-output.js";
import type { CommandIo } from "../../src/cli/command.js";
import type { EvidenceEntry } from "../../src/engine/model.js";
import type { RunDocument } from "../../src/runtime/runtime.js";

const HOSTILE = [
  "\u001b]52;c;cm0gLXJmIH4=\u0007clipboard",
  "\u001b[2A\u001b[2K● run succeeded",
  "\u001b]8;;http://x\u001b\\click\u001b]8;;\u001b\\",
  "\u009b2Aand a C1 CSI\rover",
].join("\n");
const HONEST = "compiled 3 files\ttook 2s";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function failed(output: string): EvidenceEntry {
  const at = Date.UTC(2026, 0, 1);
  return { kind: "command.finished", at, command: "make", exitCode: 1, durationMs: 5, output };
}

/** No ESC, no C1 control, no carriage return: nothing a terminal acts on but newline and tab. */
// eslint-disable-next-line no-control-regex -- the controls are what the test looks for
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

describe("command output on the terminal", () => {
  it("clustercode run prints a command's output and its failure without control sequences", async () => {
    const stateDir = mkdtempSync(join(tmpdir(), "clustercode-escapes-"));
    dirs.push(stateDir);
    const box = join(stateDir, "devboxes", "run1-box1");
    mkdirSync(box, { recursive: true });
    writeFileSync(join(box, "pid"), "1\n");
    writeFileSync(join(box, "agent.log"), `${HONEST}\n${HOSTILE}\n`);
    let printed = "";
    const io = { stdout: { write: (text: string) => (printed += text) } } as unknown as CommandIo;
    const live = new LiveOutput({ io, stateDir, format: "human", quiet: false });
    const run = { state: { runId: "run1" } } as unknown as RunDocument;
    live.onTransition(run, [{ type: "evidence", entry: failed(HOSTILE) }] as never);
    await live.stop();
    expect(printed).toContain(`[box1] ${HONEST}\n`);
    expect(printed).toContain("^[[2A^[[2K● run succeeded");
    expect(printed).not.toMatch(CONTROL);
    // Each line the output shows is still marked as output, never a line of the CLI's own.
    expect(printed.split("\n").filter((line) => line.includes("● run succeeded"))).toEqual([
      "[box1] ^[[2A^[[2K● run succeeded",
      "    │ ^[[2A^[[2K● run succeeded",
    ]);
  });

  it("clustercode log and log --follow print the same output without control sequences", () => {
    const logged = renderRecord(
      { seq: 1, entry: failed(HOSTILE) },
      new EvidenceNarrator(),
      "human",
    );
    expect(logged).not.toMatch(CONTROL);
    expect(logged).toContain("^[]52;c;cm0gLXJmIH4=^Gclipboard");
    const followed = outputLines(
      [HONEST, ...HOSTILE.split("\n")].map((line) => ({ devbox: "box1", line })),
      "human",
    );
    expect(followed).not.toMatch(CONTROL);
    expect(followed).toContain(`      │ ${HONEST}\n`);
    expect(followed).toContain("      │ ^[]8;;http://x^[\\click^[]8;;^[\\\n");
    expect(followed).toContain("      │ ^[[2Aand a C1 CSI^Mover\n");
    // JSON keeps the output whole: JSON escapes every control character itself.
    const json = outputLines([{ devbox: "box1", line: HOSTILE }], "json");
    expect(json).not.toMatch(CONTROL);
    expect(JSON.parse(json)).toEqual({ devbox: "box1", output: HOSTILE });
  });
});
