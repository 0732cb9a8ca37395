import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

/**
 * The integration project: tests that start processes (git, the CLI, DevBoxes, Chromium, the
 * app), read `dist/`, or are end-to-end by folder. A new test under one of these folders lands
 * here by default; anywhere else it is a unit test, and the unit project's setup refuses to
 * start a process (test/helpers/no-processes.ts), pointing here.
 */
const INTEGRATION = [
  "test/e2e/**/*.test.ts",
  "test/faults/**/*.test.ts",
  "test/images/**/*.test.ts",
  "test/security/**/*.test.ts",
  "test/devbox/local/**/*.test.ts",
  "test/devbox/agent/parts.test.ts",
  "test/devbox/agent/secret-mask.test.ts",
  "test/devbox/hub/branch-move.test.ts",
  "test/devbox/hub/git-route.test.ts",
  "test/devbox/hub/warm-identity.test.ts",
  "test/devbox/ecs/e2e.test.ts",
  "test/devbox/ecs/setup-cache.test.ts",
  "test/devbox/ecs/warm.test.ts",
  "test/github/**/*.test.ts",
  "test/cli/**/*.test.ts",
  "test/runtime/judge-command.test.ts",
  "test/agents/diff-source.test.ts",
  "test/agents/engine-presets.test.ts",
  "test/agents/prototype-race.test.ts",
  "test/agents/runtime-judging.test.ts",
  "test/fuzz/webhook-payloads.fuzz.test.ts",
  "test/runtime/local-admission.test.ts",
  "test/settings/startup.test.ts",
  "test/store/embedded.test.ts",
  "test/ui/app-run-pages.test.ts",
  "test/ui/local-run-pages.test.ts",
  "test/ui/run-page-sessions.test.ts",
  "test/workflow/editor-schema.test.ts",
];

/**
 * Vitest's default is one worker less than the cores: on CI's 2-core machine, one file at a
 * time.
 */
const cores = availableParallelism();

const shared = {
  setupFiles: ["test/setup-env.ts"],
  // Safety nets, not assertions: a loaded machine starts apps and processes slower.
  testTimeout: 60_000,
  hookTimeout: 60_000,
};

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          ...shared,
          name: "unit",
          include: ["test/**/*.test.ts"],
          exclude: INTEGRATION,
          setupFiles: [...shared.setupFiles, "test/helpers/no-processes.ts"],
          // CPU-bound: one file per core; first, then the integration project.
          maxWorkers: cores,
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          ...shared,
          name: "integration",
          include: INTEGRATION,
          globalSetup: ["test/helpers/fresh-build.ts"],
          // These wait on processes, git and sockets more than they compute: two files per core.
          maxWorkers: 2 * cores,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
