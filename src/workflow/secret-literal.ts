import { isPair, isScalar, isSeq, visit, type Document } from "yaml";
import { formatPath, type Finding, type PathSegment } from "./finding.js";
import type { SourceMap } from "./source-map.js";

/** Shapes of real credentials; the value itself is never repeated in a finding. */
const CREDENTIALS: readonly { kind: string; pattern: RegExp }[] = [
  {
    kind: "a GitHub token",
    pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})/,
  },
  { kind: "an AWS access key id", pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/ },
  { kind: "an Anthropic API key", pattern: /\bsk-ant-[A-Za-z0-9_-]{20,}/ },
  { kind: "an OpenAI API key", pattern: /\bsk-(?:proj-)?[A-Za-z0-9_-]{32,}/ },
  { kind: "a Slack token", pattern: /\bxox[abprs]-[A-Za-z0-9-]{10,}/ },
  { kind: "a GitLab token", pattern: /\bglpat-[A-Za-z0-9_-]{20,}/ },
  { kind: "an npm token", pattern: /\bnpm_[A-Za-z0-9]{36}\b/ },
  { kind: "a Google API key", pattern: /\bAIza[0-9A-Za-z_-]{35}\b/ },
  { kind: "a private key", pattern: /-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----/ },
];

/** Findings for every scalar, key or value, that looks like a credential. */
export function findSecretLiterals(document: Document, source: SourceMap): Finding[] {
  const findings: Finding[] = [];
  visit(document, {
    Scalar(_key, node, ancestors) {
      if (typeof node.value !== "string") return;
      const match = CREDENTIALS.find(({ pattern }) => pattern.test(node.value as string));
      if (match === undefined) return;
      const path = ancestors.flatMap((ancestor, index): PathSegment[] => {
        if (isPair(ancestor)) return isScalar(ancestor.key) ? [String(ancestor.key.value)] : [];
        if (!isSeq(ancestor)) return [];
        const child = ancestors[index + 1] ?? node;
        return [ancestor.items.indexOf(child)];
      });
      const message = `this looks like ${match.kind}: never commit credentials; list the secret's name under devbox.secrets, store its value in the app's secret store, and revoke this one`;
      findings.push(
        source.findingAt("secret-literal", node.range?.[0] ?? 0, formatPath(path), message),
      );
    },
  });
  return findings;
}
