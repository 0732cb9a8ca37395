import { describe, expect, it } from "vitest";
import { MAX_ALIASES, MAX_FILE_BYTES, MAX_NESTING } from "../../src/workflow/parse.js";
import { at, expectClean, expectOne, validate, workflow, yaml } from "./helpers.js";

describe("yaml rule", () => {
  it("reports a duplicate key in a nested mapping at the second key", () => {
    const text = yaml`
      version: 1
      name: t
      on: { label: go }
      nodes:
        build:
          kind: run
          run: make
          run: make all
    `;
    const result = validate(text);
    expect(result.ok).toBe(false);
    expect(result.findings).toEqual([
      expect.objectContaining({ rule: "yaml", severity: "error", ...at(text, "run: make all") }),
    ]);
    expect(result.findings[0]?.message).toMatch(/appears twice in one mapping: keep one/);
  });

  it("reports YAML that does not parse where the parser stopped", () => {
    const text = yaml`
      version: 1
      name: t
      on: { label: [go }
      nodes:
        build: { kind: run, run: make }
    `;
    const result = validate(text);
    expect(result.ok).toBe(false);
    expect(result.findings.every((finding) => finding.rule === "yaml")).toBe(true);
    expect(result.findings[0]).toMatchObject({ severity: "error", ...at(text, "}") });
    expect(result.findings[0]?.message).toMatch(
      /^YAML does not parse: Flow sequence .* end with a \]/,
    );
  });

  it("reports a tab used for indentation on its line", () => {
    const text = "version: 1\nname: t\non:\n\tlabel: go\nnodes:\n  a: { kind: run, run: make }\n";
    const findings = validate(text).findings;
    expect(findings.length).toBeGreaterThan(0);
    expect(findings.every((finding) => finding.rule === "yaml")).toBe(true);
    expect(findings[0]).toMatchObject({ line: 4 });
  });

  it("refuses a second YAML document, at its start", () => {
    const text = `${workflow("a: { kind: run, run: make }")}---\nversion: 1\n`;
    const finding = expectOne(text, "yaml", { needle: "---" });
    expect(finding.message).toMatch(/multiple documents/);
  });

  // A valid workflow whose devbox.setup repeats one command through `count` aliases.
  const withAliases = (count: number) =>
    yaml`
      version: 1
      name: t
      on: { label: go }
      devbox:
        setup: [&setup npm ci${", *setup".repeat(count)}]
      nodes:
        a: { kind: run, run: make }
    `;

  it(`refuses more than ${MAX_ALIASES} aliases, at the first one over the limit`, () => {
    const text = withAliases(MAX_ALIASES + 1);
    const finding = expectOne(text, "yaml", { needle: "*setup", occurrence: MAX_ALIASES + 1 });
    expect(finding.message).toMatch(
      /101 aliases; at most 100 are allowed: write the repeated parts out/,
    );
  });

  it(`accepts exactly ${MAX_ALIASES} aliases`, () => {
    expectClean(withAliases(MAX_ALIASES));
  });

  it("refuses an alias whose anchor does not come before it, at the alias", () => {
    const text = yaml`
      version: 1
      name: t
      on: { label: go }
      devbox:
        setup: [*setup, &setup npm ci]
      nodes:
        a: { kind: run, run: make }
    `;
    const finding = expectOne(text, "yaml", { needle: "*setup" });
    expect(finding.message).toBe("the alias *setup has no anchor &setup before it");
  });

  it("refuses nested aliases that expand exponentially, with few aliases", () => {
    const levels = ["&a [x, x, x, x, x, x, x, x, x, x]"];
    for (const [index, name] of ["b", "c", "d", "e", "f", "g"].entries()) {
      const previous = "abcdefg"[index] as string;
      levels.push(`&${name} [${Array.from({ length: 10 }, () => `*${previous}`).join(", ")}]`);
    }
    const text = yaml`
      version: 1
      name: t
      on: { label: go }
      nodes:
        a: { kind: run, run: make }
      bomb: [${levels.join(", ")}]
    `;
    expect(text.match(/\*/g)).toHaveLength(60);
    const result = validate(text);
    expect(result.findings).toEqual([
      expect.objectContaining({ rule: "yaml", severity: "error", line: 1, column: 1 }),
    ]);
    expect(result.findings[0]?.message).toMatch(
      /expand to too much data: write the repeated parts out/,
    );
  });

  it("refuses a file over 256 KiB at 1:1, and accepts one of exactly 256 KiB", () => {
    const base = workflow("a: { kind: run, run: make }");
    const padding = (bytes: number) => `# ${"x".repeat(bytes - base.length - 3)}\n`;
    const exact = base + padding(MAX_FILE_BYTES);
    expect(Buffer.byteLength(exact)).toBe(MAX_FILE_BYTES);
    expectClean(exact);

    const over = base + padding(MAX_FILE_BYTES + 1);
    const result = validate(over);
    expect(result.findings).toEqual([
      expect.objectContaining({ rule: "yaml", severity: "error", line: 1, column: 1 }),
    ]);
    expect(result.findings[0]?.message).toMatch(
      /262145 bytes; workflows are limited to 262144 bytes.*move long prompts into the repository/,
    );
  });

  it("counts bytes, not characters", () => {
    const base = workflow("a: { kind: run, run: make }");
    const chars = Math.ceil((MAX_FILE_BYTES - base.length) / 3) + 1;
    const text = `${base}# ${"€".repeat(chars)}\n`;
    expect(text.length).toBeLessThan(MAX_FILE_BYTES);
    expect(validate(text).findings[0]).toMatchObject({ rule: "yaml" });
  });

  describe("nesting", () => {
    const head = "version: 1\nname: t\non: { label: go }\nnodes:\n  a: { kind: run, run: make }\n";
    const deep = 10_000;
    const cases: [string, string, number][] = [
      ["flow sequences", `${head}x: ${"[".repeat(deep)}${"]".repeat(deep)}\n`, 6],
      ["flow mappings", `${head}x: ${"{a: ".repeat(deep)}1${"}".repeat(deep)}\n`, 6],
      [
        "flow sequences over lines",
        `${head}x:\n${Array.from({ length: deep }, () => "  [").join("\n")}\n  ${"]".repeat(deep)}\n`,
        6 + MAX_NESTING,
      ],
      [
        // Indentation makes block mappings big: 700 levels stay within the file size limit.
        "block mappings",
        `${head}x:\n${Array.from({ length: 700 }, (_, i) => `${" ".repeat(i + 1)}k:\n`).join("")}`,
        6 + MAX_NESTING,
      ],
      ["block sequences", `${head}x:\n${"- ".repeat(deep)}1\n`, 7],
    ];
    for (const [name, text, line] of cases) {
      it(`reports ${name} nested too deep as a finding where the limit is crossed`, () => {
        const started = Date.now();
        const result = validate(text);
        expect(Date.now() - started).toBeLessThan(5_000);
        expect(result.ok).toBe(false);
        expect(result.findings).toEqual([
          expect.objectContaining({ rule: "yaml", severity: "error", line }),
        ]);
        expect(result.findings[0]?.message).toBe(
          `the YAML nests deeper than ${MAX_NESTING} levels here: flatten it`,
        );
      });
    }

    it(`accepts ${MAX_NESTING} levels`, () => {
      const text = `${head}x: ${"[".repeat(MAX_NESTING - 1)}${"]".repeat(MAX_NESTING - 1)}\n`;
      expect(validate(text).findings.filter((finding) => finding.rule === "yaml")).toEqual([]);
    });
  });
});
