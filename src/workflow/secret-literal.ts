import { visit, type Document } from "yaml";
import { formatPath, type Finding } from "./finding.js";
import { yamlPath, type SourceMap } from "./source-map.js";

/** Shapes of real credentials; the value itself is never repeated in a finding. */
export const CREDENTIALS: readonly { kind: string; pattern: RegExp }[] = [
  {
    kind: "a GitHub token",
    pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})/g,
  },
  { kind: "an AWS access key id", pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g },
  { kind: "an Anthropic API key", pattern: /\bsk-ant-[A-Za-z0-9_-]{20,}/g },
  { kind: "an OpenAI API key", pattern: /\bsk-(?:proj-)?[A-Za-z0-9_-]{32,}/g },
  { kind: "a Slack token", pattern: /\bxox[abprs]-[A-Za-z0-9-]{10,}/g },
  { kind: "a GitLab token", pattern: /\bglpat-[A-Za-z0-9_-]{20,}/g },
  { kind: "an npm token", pattern: /\bnpm_[A-Za-z0-9]{36}\b/g },
  { kind: "a Google API key", pattern: /\bAIza[0-9A-Za-z_-]{35}\b/g },
  { kind: "a private key", pattern: /-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----/g },
];

interface ScalarSpan {
  start: number;
  end: number;
  path: string;
  value: unknown;
}

/**
 * Findings for every credential-shaped text in the file: in keys, values and comments alike (a
 * token in a comment is committed just the same), each at the line where it appears.
 */
export function findSecretLiterals(text: string, document: Document, source: SourceMap): Finding[] {
  const scalars: ScalarSpan[] = [];
  visit(document, {
    Scalar(_key, node, ancestors) {
      const [start, end] = node.range ?? [0, 0];
      scalars.push({ start, end, path: formatPath(yamlPath(ancestors, node)), value: node.value });
    },
  });
  const findings: Finding[] = [];
  const reported = new Set<ScalarSpan>();
  const offsets = new Set<number>();
  // One finding per place: an Anthropic key also has the shape of an OpenAI key.
  const report = (offset: number, path: string, kind: string) => {
    if (offsets.has(offset)) return;
    offsets.add(offset);
    const message = `this looks like ${kind}: never commit credentials; list the secret's name under devbox.secrets, store its value in the app's secret store, and revoke this one`;
    findings.push(source.findingAt("secret-literal", offset, path, message));
  };
  for (const { kind, pattern } of CREDENTIALS) {
    for (const match of text.matchAll(pattern)) {
      const scalar = scalars.find((span) => span.start <= match.index && match.index < span.end);
      if (scalar !== undefined) reported.add(scalar);
      report(match.index, scalar?.path ?? "", kind);
    }
  }
  // Escapes or folding can hide a credential from the raw text; the parsed value still shows it.
  for (const scalar of scalars) {
    if (reported.has(scalar) || typeof scalar.value !== "string") continue;
    const value = scalar.value;
    const match = CREDENTIALS.find(({ pattern }) => new RegExp(pattern.source).test(value));
    if (match !== undefined) report(scalar.start, scalar.path, match.kind);
  }
  return findings;
}
