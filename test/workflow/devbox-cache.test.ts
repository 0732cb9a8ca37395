import { describe, expect, it } from "vitest";
import { cachePathProblem } from "../../src/workflow/cache-path.js";
import { expectClean, findingsOf, at } from "./helpers.js";

function withCache(key: string, paths: string): string {
  return [
    "version: 1",
    "name: t",
    "on:",
    "  label: go",
    "devbox:",
    "  setup: [npm ci]",
    "  cache:",
    `    - key: ${key}`,
    `      paths: ${paths}`,
    "nodes:",
    "  build: { kind: run, run: make }",
    "",
  ].join("\n");
}

describe("devbox.cache", () => {
  it("accepts key files and paths inside the checkout", () => {
    expectClean(withCache("[package-lock.json]", "[node_modules, packages/web/node_modules]"));
  });

  it("refuses a path that escapes the checkout, on its line", () => {
    for (const path of [
      "../outside",
      "node_modules/../../x",
      "/etc",
      "~/.npm",
      ".",
      ".git/hooks",
    ]) {
      const text = withCache("[package-lock.json]", `["${path}"]`);
      const findings = findingsOf(text, "schema");
      expect(findings, path).toHaveLength(1);
      expect(findings[0]?.message, path).toContain(path);
      expect(findings[0]?.line).toBe(at(text, "paths:").line);
    }
  });

  it("refuses a key file outside the checkout and an entry without paths", () => {
    expect(findingsOf(withCache('["../lock"]', "[node_modules]"), "schema")).toHaveLength(1);
    expect(findingsOf(withCache("[package-lock.json]", "[]"), "schema")).toHaveLength(1);
  });

  it("names why a path is refused", () => {
    expect(cachePathProblem("../x")).toContain('".."');
    expect(cachePathProblem("/abs")).toContain("relative");
    expect(cachePathProblem("node_modules")).toBeUndefined();
  });
});
