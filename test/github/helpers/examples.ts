import { createRequire } from "node:module";

interface ExampleGroup {
  name: string;
  examples: Record<string, unknown>[];
}

const require = createRequire(import.meta.url);
const groups = require("@octokit/webhooks-examples/api.github.com/index.json") as ExampleGroup[];

/**
 * A deep copy of the first real webhook example of `event` (with `action`, when given), typed
 * by the caller as the event's payload type from `@octokit/webhooks-types`.
 */
export function webhookExample<T>(event: string, action?: string): T {
  const group = groups.find((candidate) => candidate.name === event);
  const example = group?.examples.find(
    (candidate) => action === undefined || candidate.action === action,
  );
  if (example === undefined) throw new Error(`no webhook example for ${event}.${action ?? "*"}`);
  return structuredClone(example) as T;
}

/** Every real webhook example of `event` (deep copies). */
export function webhookExamples(event: string): Record<string, unknown>[] {
  const group = groups.find((candidate) => candidate.name === event);
  return (group?.examples ?? []).map((example) => structuredClone(example));
}
