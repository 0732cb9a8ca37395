import { describe, expect, it } from "vitest";
import { allowedHosts } from "../../src/workflow/network-allow.js";
import { expectClean, findingsOf, validate, at } from "./helpers.js";

function withNetwork(allow: string): string {
  return [
    "version: 1",
    "name: t",
    "on:",
    "  label: go",
    "devbox:",
    "  network:",
    `    allow: ${allow}`,
    "nodes:",
    "  build: { kind: run, run: make }",
    "",
  ].join("\n");
}

describe("devbox.network.allow", () => {
  it("accepts shortcuts and host names", () => {
    expectClean(
      withNetwork('[npm, pypi, github, crates, go, maven, rubygems, debian, "api.example.com"]'),
    );
  });

  it("names an unknown shortcut on its line, with the known ones", () => {
    const text = withNetwork("[npm, nmp]");
    const findings = findingsOf(text, "schema");
    expect(findings, JSON.stringify(validate(text).findings)).toHaveLength(1);
    expect(findings[0]?.message).toContain('unknown shortcut "nmp"');
    expect(findings[0]?.message).toContain("npm, pypi, github");
    expect(findings[0]?.line).toBe(at(text, "allow:").line);
  });

  it("refuses a URL, a host with a port and upper case as malformed hosts", () => {
    for (const entry of ['"https://api.example.com"', '"api.example.com:443"', "Api.Example.com"]) {
      const text = withNetwork(`[${entry}]`);
      const findings = findingsOf(text, "schema");
      expect(findings, entry).toHaveLength(1);
      expect(findings[0]?.message).toContain("is not a host name");
      expect(findings[0]?.line).toBe(at(text, "allow:").line);
    }
  });

  it("expands each ecosystem shortcut to its registry's hosts", () => {
    const expected = {
      npm: ["registry.npmjs.org", "registry.yarnpkg.com"],
      pypi: ["pypi.org", "files.pythonhosted.org"],
      crates: ["crates.io", "index.crates.io", "static.crates.io"],
      go: ["proxy.golang.org", "sum.golang.org"],
      maven: ["repo.maven.apache.org", "repo1.maven.org"],
      rubygems: ["rubygems.org", "index.rubygems.org"],
      debian: ["deb.debian.org", "security.debian.org"],
    };
    for (const [shortcut, hosts] of Object.entries(expected))
      expect(allowedHosts([shortcut]), shortcut).toEqual(new Set(hosts));
    expect(allowedHosts(["maven", "rubygems"]).has("registry.npmjs.org")).toBe(false);
  });

  it("names an unknown ecosystem (gradle) with maven and rubygems among the known", () => {
    const findings = findingsOf(withNetwork("[gradle]"), "schema");
    expect(findings).toHaveLength(1);
    expect(findings[0]?.message).toContain('unknown shortcut "gradle"');
    expect(findings[0]?.message).toContain("maven, rubygems");
  });

  it("expands shortcuts; unset means the registries and the repository's host", () => {
    expect([...allowedHosts(["pypi", "api.example.com"])]).toEqual([
      "pypi.org",
      "files.pythonhosted.org",
      "api.example.com",
    ]);
    expect(allowedHosts(["github"], "ghe.example.com")).toEqual(new Set(["ghe.example.com"]));
    const defaults = allowedHosts(undefined, "github.com");
    for (const host of ["registry.npmjs.org", "pypi.org", "github.com", "api.github.com"])
      expect(defaults.has(host), host).toBe(true);
    expect(defaults.has("api.example.com")).toBe(false);
  });
});
