import { describe, expect, it } from "vitest";
import { ruleMessages } from "../helpers/repository-lint.js";

/** The run-records rule's messages for `code` as the file `path` (from the repository root). */
const runRecordMessages = (path: string, code: string) =>
  ruleMessages("no-restricted-syntax", path, code);

const THROUGH_REPOSITORY =
  "Read runs and evidence through RunRepository (src/store/run-repository.ts), which hands out typed records.";

describe("the lint rule for typed run records", () => {
  it("fails the store's raw run reads outside src/store/", async () => {
    const messages = await runRecordMessages(
      "src/runtime/raw-read-fixture.ts",
      [
        'import type { Store } from "../store/store.js";',
        "export async function repoOf(store: Store, runId: string) {",
        "  const evidence = await store.listEvidence(runId);",
        "  const listed = await store.listRuns('o/r');",
        "  return [(await store.getRun(runId))?.repo, evidence, listed];",
        "}",
      ].join("\n"),
    );
    expect(messages).toEqual([THROUGH_REPOSITORY, THROUGH_REPOSITORY, THROUGH_REPOSITORY]);
  });

  it("fails a decodeRun outside src/store/", async () => {
    const messages = await runRecordMessages(
      "src/github/decode-fixture.ts",
      "declare const decodeRun: (stored: unknown) => unknown;\nexport const run = decodeRun({});\n",
    );
    expect(messages).toContain("Runs are decoded in src/store/ only: use RunRepository.");
  });

  it("passes the run repository, and the store's own reads inside src/store/", async () => {
    const outside = await runRecordMessages(
      "src/runtime/repository-fixture.ts",
      [
        'import type { RunRepository } from "../store/run-repository.js";',
        "export async function repoOf(runs: RunRepository, runId: string) {",
        "  return [await runs.repoOf(runId), await runs.get(runId), await runs.evidence(runId)];",
        "}",
      ].join("\n"),
    );
    const inside = await runRecordMessages(
      "src/store/raw-read-fixture.ts",
      [
        'import type { Store } from "./store.js";',
        "export const read = (store: Store, runId: string) => store.getRun(runId);",
      ].join("\n"),
    );
    expect([...outside, ...inside]).toEqual([]);
  });
});
