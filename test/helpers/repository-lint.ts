import { ESLint, type Linter } from "eslint";
import tseslint from "typescript-eslint";

const ROOT = new URL("../../", import.meta.url).pathname;

/**
 * The repository's own eslint.config.js, with type-aware linting off: the fixtures are strings
 * at paths no tsconfig lists, and the rules tried read only their syntax.
 */
async function repositoryLint(): Promise<ESLint> {
  const url = new URL("eslint.config.js", `file://${ROOT}`).href;
  const { default: config } = (await import(url)) as { default: Linter.Config[] };
  return new ESLint({
    cwd: ROOT,
    overrideConfigFile: true,
    overrideConfig: [...config, { files: ["**/*.ts"], ...tseslint.configs.disableTypeChecked }],
  });
}

/** Rule `ruleId`'s messages for `code` linted as the file `path` (from the repository root). */
export async function ruleMessages(ruleId: string, path: string, code: string): Promise<string[]> {
  const [result] = await (await repositoryLint()).lintText(code, { filePath: `${ROOT}${path}` });
  return (result?.messages ?? [])
    .filter((message) => message.ruleId === ruleId)
    .map((message) => message.message);
}
