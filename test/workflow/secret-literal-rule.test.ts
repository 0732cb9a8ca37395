import { describe, expect, it } from "vitest";
import { at, expectClean, expectOne, findingsOf, workflow, yaml } from "./helpers.js";

const GITHUB = `ghp_${"A1b2C3d4E5".repeat(4)}`;
const AWS = "AKIAIOSFODNN7EXAMPLE";
const ANTHROPIC = `sk-ant-api03-${"x".repeat(40)}`;

describe("secret-literal", () => {
  it("points at the line inside a block scalar where the token is", () => {
    const text = yaml`
      version: 1
      name: t
      on: { label: go }
      nodes:
        publish:
          kind: run
          run: |
            npm ci
            git push https://x-access-token:${GITHUB}@github.com/acme/app.git
    `;
    const finding = expectOne(text, "secret-literal", { needle: GITHUB });
    expect(finding.message).toMatch(/looks like a GitHub token/);
    expect(finding.path).toBe("nodes.publish.run");
  });

  it("never repeats the credential in the message", () => {
    const text = workflow(`a: { kind: run, run: "aws s3 ls --key ${AWS}" }`);
    const finding = expectOne(text, "secret-literal", { needle: AWS });
    expect(finding.message).toMatch(/an AWS access key id/);
    expect(finding.message).not.toContain(AWS);
  });

  it("finds credentials in comments too", () => {
    const text = `# old token: ${GITHUB}\n${workflow("a: { kind: run, run: make }")}`;
    const finding = expectOne(text, "secret-literal", { needle: GITHUB });
    expect(finding.path).toBe("");
  });

  it("finds credentials used as keys", () => {
    const text = `${workflow("a: { kind: run, run: make }")}x-${ANTHROPIC}: 1\n`;
    const finding = expectOne(text, "secret-literal", { needle: ANTHROPIC });
    expect(finding.message).toMatch(/an Anthropic API key/);
  });

  it("reports an Anthropic key once, not also as an OpenAI key", () => {
    const text = workflow(`a: { kind: run, run: "curl -H 'x-api-key: ${ANTHROPIC}' api" }`);
    expect(findingsOf(text, "secret-literal")).toHaveLength(1);
  });

  it("finds a private key block", () => {
    const text = yaml`
      version: 1
      name: t
      on: { label: go }
      nodes:
        a:
          kind: run
          run: |
            cat > key.pem <<EOF
            -----BEGIN RSA PRIVATE KEY-----
            MIIEpAIBAAKCAQEA
            EOF
    `;
    expectOne(text, "secret-literal", { needle: "-----BEGIN" });
  });

  it("finds every credential in a file, each at its own place", () => {
    const text = workflow(
      `a: { kind: run, run: "${AWS}" }\nb: { kind: run, run: "${GITHUB}" }`,
      "- { from: a, to: b }",
    );
    const findings = findingsOf(text, "secret-literal");
    expect(findings).toEqual([
      expect.objectContaining(at(text, AWS)),
      expect.objectContaining(at(text, GITHUB)),
    ]);
  });

  it("finds a credential written with YAML escapes", () => {
    const escaped = GITHUB.replace("ghp_", "gh\\x70_");
    const text = workflow(`a: { kind: run, run: "echo ${escaped}" }`);
    expectOne(text, "secret-literal", { needle: '"echo' });
  });

  it("ignores secret names, placeholders and short look-alikes", () => {
    expectClean(
      yaml`
        version: 1
        name: t
        on: { label: go }
        devbox: { secrets: [GITHUB_TOKEN, NPM_TOKEN, OPENAI_API_KEY] }
        nodes:
          a: { kind: run, run: 'echo "$GITHUB_TOKEN" | gh auth login --with-token; echo ghp_xxx sk-ant-...' }
      `,
    );
  });
});
