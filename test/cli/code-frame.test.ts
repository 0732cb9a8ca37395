import { describe, expect, it } from "vitest";
import { codeFrame } from "../../src/cli/code-frame.js";

const TEXT = "version: 1\nname: t\nnodes:\n  a: { kind: rnu }\nedges: []\n";

describe("codeFrame", () => {
  it("shows the line, one neighbour each side, and a caret under the column", () => {
    expect(codeFrame(TEXT, 4, 14)).toBe(
      [
        "  3 | nodes:",
        "> 4 |   a: { kind: rnu }",
        "    |              ^",
        "  5 | edges: []",
        "",
      ].join("\n"),
    );
  });

  it("shows no line before the first nor after the last", () => {
    expect(codeFrame(TEXT, 1, 1)).toBe("> 1 | version: 1\n    | ^\n  2 | name: t\n");
    expect(codeFrame(TEXT, 5, 8)).toBe(
      "  4 |   a: { kind: rnu }\n> 5 | edges: []\n    |        ^\n",
    );
  });

  it("widens the gutter for two-digit line numbers", () => {
    const text = Array.from({ length: 10 }, (_, i) => `line${i + 1}`).join("\n");
    expect(codeFrame(text, 10, 1)).toBe("   9 | line9\n> 10 | line10\n     | ^\n");
  });

  it("keeps tabs before the column so the caret lines up", () => {
    expect(codeFrame("a:\t\tx\n", 1, 5)).toBe("> 1 | a:\t\tx\n    |   \t\t^\n");
  });

  it("cuts a long line around the column", () => {
    const line = `${"x".repeat(150)}HERE${"y".repeat(150)}`;
    const frame = codeFrame(line, 1, 151);
    const [source = "", caret = ""] = frame.split("\n");
    expect(source.length).toBeLessThan(120);
    expect(caret.indexOf("^")).toBe(source.indexOf("HERE"));
  });

  it("is empty for a line the text does not have", () => {
    expect(codeFrame("", 1, 1)).toBe("");
    expect(codeFrame(TEXT, 9, 1)).toBe("");
  });
});
