// @ts-check
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/", "node_modules/", "infra/cdk.out/", "coverage/"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_" }],
    },
  },
  {
    // Settings are decoded once, at start, by src/settings/; everything else is handed them.
    files: ["src/**/*.ts"],
    ignores: ["src/settings/**"],
    rules: {
      "no-restricted-properties": [
        "error",
        {
          object: "process",
          property: "env",
          message:
            "Read settings from the decoded Settings (src/settings/), passed in as a parameter.",
        },
      ],
    },
  },
  {
    files: ["src/engine/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            { group: ["node:*"], message: "The engine is pure: no Node.js I/O." },
            {
              group: ["@aws-sdk/*", "probot", "@octokit/*"],
              message: "The engine is pure: no SDKs.",
            },
            {
              group: ["**/runtime/**", "**/store/**", "**/devbox/**", "**/github/**"],
              message: "The engine is pure.",
            },
          ],
        },
      ],
      "no-restricted-globals": ["error", "Date", "setTimeout", "setInterval", "process"],
      "no-restricted-properties": ["error", { object: "Math", property: "random" }],
    },
  },
  { files: ["**/*.js"], ...tseslint.configs.disableTypeChecked },
);
