import { describe, expect, it } from "vitest";
import { closeMatch, editDistance, suggest } from "../../src/workflow/edit-distance.js";

describe("editDistance", () => {
  it("counts insertions, deletions and substitutions", () => {
    expect(editDistance("timout", "timeout")).toBe(1);
    expect(editDistance("runn", "run")).toBe(1);
    expect(editDistance("kitten", "sitting")).toBe(3);
    expect(editDistance("", "abc")).toBe(3);
  });

  it("counts a swap of neighbours as one edit", () => {
    expect(editDistance("cluade", "claude")).toBe(1);
    expect(editDistance("rnu", "run")).toBe(1);
  });
});

describe("suggest", () => {
  it("names the one candidate a typo is closest to", () => {
    expect(suggest("timout", ["title", "timeout", "idempotent"])).toBe("timeout");
    expect(suggest("runn", ["kind", "run", "agent", "prompt"])).toBe("run");
    expect(suggest("cluade", ["claude", "codex"])).toBe("claude");
  });

  it("ignores case, but still suggests the right case", () => {
    expect(suggest("Claude", ["claude", "codex"])).toBe("claude");
  });

  it("suggests nothing for a word that is no typo of any candidate", () => {
    expect(suggest("foo", ["run", "loop"])).toBeUndefined();
    expect(suggest("retries", ["timeout", "title", "run"])).toBeUndefined();
  });

  it("allows more edits to longer words", () => {
    expect(suggest("Europe/Lndn", ["Europe/London", "Europe/Lisbon"])).toBe("Europe/London");
    // Two edits are too many for a five-letter word.
    expect(suggest("chekk", ["cheap"])).toBeUndefined();
  });

  it("suggests nothing when two candidates are equally close", () => {
    expect(suggest("bat", ["cat", "hat"])).toBeUndefined();
  });

  it("suggests nothing for a word that is a candidate", () => {
    expect(suggest("run", ["run", "rut"])).toBeUndefined();
  });

  it("backs the CLI's unknown-command hint", () => {
    expect(closeMatch("valdiate", ["validate", "run", "graph"])).toBe("validate");
  });
});
