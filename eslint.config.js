// @ts-check
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import { layersPlugin } from "./lint/layers.js";

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
    // Runs leave the store typed: outside src/store/, the RunRepository is the one run API (it
    // decodes each stored record once); the store's raw reads hand out `unknown` snapshots.
    files: ["src/**/*.ts"],
    ignores: ["src/store/**"],
    rules: {
      "no-restricted-syntax": [
        "error",
        {
          selector:
            "CallExpression[callee.property.name=/^(getRun|listActiveRuns|listRunsOfIssue|listEvidence)$/]",
          message:
            "Read runs and evidence through RunRepository (src/store/run-repository.ts), which hands out typed records.",
        },
        {
          selector: "CallExpression[callee.property.name='listRuns'][callee.object.name=/store$/i]",
          message:
            "Read runs and evidence through RunRepository (src/store/run-repository.ts), which hands out typed records.",
        },
        {
          selector:
            "CallExpression[callee.property.name='listRuns'][callee.object.property.name=/store$/i]",
          message:
            "Read runs and evidence through RunRepository (src/store/run-repository.ts), which hands out typed records.",
        },
        {
          selector: "Identifier[name='decodeRun']",
          message: "Runs are decoded in src/store/ only: use RunRepository.",
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
          ],
        },
      ],
      "no-restricted-globals": ["error", "Date", "setTimeout", "setInterval", "process"],
      "no-restricted-properties": ["error", { object: "Math", property: "random" }],
    },
  },
  {
    files: ["src/**/*.ts"],
    plugins: { layers: layersPlugin },
    rules: { "layers/look-down": "error" },
  },
  {
    // Long functions hide what each part decides: split them (schema files describe data).
    files: ["src/**/*.ts"],
    ignores: ["src/**/*.schema.ts", "src/**/*-schemas.ts"],
    rules: {
      "max-lines-per-function": [
        "error",
        { max: 60, skipBlankLines: true, skipComments: true, IIFEs: true },
      ],
    },
  },
  { files: ["**/*.js"], ...tseslint.configs.disableTypeChecked },
);
