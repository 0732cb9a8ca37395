import { join } from "node:path";
import { ESLint, Linter } from "eslint";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../..");
const READS_ENV = `export const port = process.env.PORT;\nexport const { HOME } = process.env;\n`;

/**
 * What the repository's ESLint configuration says of a file reading `process.env`: the rule is
 * taken from the configuration computed for that path, then run alone (no type information, so
 * the check stays quick).
 */
async function messagesOf(file: string): Promise<string[]> {
  const config = (await new ESLint({ cwd: ROOT }).calculateConfigForFile(join(ROOT, file))) as {
    rules?: Linter.RulesRecord;
  };
  const rule = config.rules?.["no-restricted-properties"];
  if (rule === undefined) return [];
  const messages = new Linter().verify(READS_ENV, {
    languageOptions: { sourceType: "module", globals: { process: "readonly" } },
    rules: { "no-restricted-properties": rule },
  });
  return messages.map((message) => `${message.ruleId}: ${message.message}`);
}

describe("the lint rule on process.env", () => {
  it("refuses process.env anywhere in src/ outside the settings module", async () => {
    const messages = await messagesOf("src/cli/main.ts");
    expect(messages).toHaveLength(2);
    expect(messages[0]).toMatch(
      /^no-restricted-properties: .*process\.env.*decoded Settings \(src\/settings\/\)/,
    );
  });

  it("lets the settings module read it", async () => {
    expect(await messagesOf("src/settings/process-environment.ts")).toEqual([]);
  });
});
