/**
 * The container images cannot be built here (no Docker engine), so they are linted instead:
 * dockerfile-utils' validator must find nothing, the parsed instructions must say what matters
 * (multi-stage, non-root, production dependencies only, a health check, the agent as
 * entrypoint), and shellcheck must pass every shell script.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Copy, DockerfileParser, type Instruction } from "dockerfile-ast";
import { validate } from "dockerfile-utils";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");
const DOCKERFILES = ["Dockerfile", "images/devbox/Dockerfile"];
const SHELL_SCRIPTS = ["images/devbox/entrypoint.sh", ".ci/run"];

/** The instructions of the last stage (the image that ships). */
function finalStage(path: string): Instruction[] {
  const instructions = DockerfileParser.parse(read(path)).getInstructions();
  const lastFrom = instructions.findLastIndex((instruction) => instruction.getKeyword() === "FROM");
  return instructions.slice(lastFrom);
}
const argsOf = (instruction: Instruction | undefined) =>
  instruction?.getArguments().map((arg) => arg.getValue()) ?? [];
/** An instruction's flags and arguments. */
const textOf = (instruction: Instruction) =>
  [
    ...(instruction instanceof Copy ? instruction.getFlags().map((flag) => flag.toString()) : []),
    ...argsOf(instruction),
  ].join(" ");
const find = (stage: Instruction[], keyword: string) =>
  stage.filter((instruction) => instruction.getKeyword() === keyword);

describe("Dockerfiles", () => {
  it.each(DOCKERFILES)("%s passes the validator with no problem at all", (path) => {
    const problems = validate(read(path)).map(
      (problem) =>
        `${path}:${problem.range.start.line + 1}: ${typeof problem.message === "string" ? problem.message : problem.message.value}`,
    );
    expect(problems).toEqual([]);
  });

  it.each(DOCKERFILES)("%s is multi-stage and runs untrusted code as a non-root user", (path) => {
    const froms = DockerfileParser.parse(read(path)).getFROMs();
    expect(froms.length).toBeGreaterThanOrEqual(2);
    expect(froms[0]?.getBuildStage()).toBe("build");
    const users = find(finalStage(path), "USER");
    expect(users).toHaveLength(1);
    if (path === "Dockerfile") expect(argsOf(users[0])[0]).not.toMatch(/^(root|0)(:|$)/);
    else {
      // The DevBox agent is root so that the commands, run as `runner`, cannot reach it.
      const runs = find(finalStage(path), "RUN").map((r) => argsOf(r).join(" "));
      expect(runs.some((run) => /useradd .*\brunner$/.test(run))).toBe(true);
      expect(read("images/devbox/entrypoint.sh")).toContain(
        "CLUSTERCODE_COMMAND_SANDBOX=setpriv:runner",
      );
    }
    // Dependencies are installed with the lifecycle scripts off (`prepare` runs tsc).
    for (const run of find(finalStage(path), "RUN").map((r) => argsOf(r).join(" "))) {
      if (run.includes("npm ci")) expect(run).toMatch(/npm ci --omit=dev --ignore-scripts/);
    }
  });

  it("the app image checks GET /healthz and copies only the build's output", () => {
    const stage = finalStage("Dockerfile");
    const healthcheck = find(stage, "HEALTHCHECK");
    expect(healthcheck).toHaveLength(1);
    expect(argsOf(healthcheck[0]).join(" ")).toContain("http://127.0.0.1:3000/healthz");
    const copies = find(stage, "COPY").map(textOf);
    expect(copies).toContain("--from=build /app/dist ./dist");
    expect(copies.some((copy) => copy.startsWith("src") || copy.startsWith("."))).toBe(false);
  });

  it("the app image runs the app as `npm start` does, with the same Node flags", () => {
    const cmd = find(finalStage("Dockerfile"), "CMD");
    expect(cmd).toHaveLength(1);
    const pkg = JSON.parse(read("package.json")) as { scripts: { start: string } };
    expect(JSON.parse(argsOf(cmd[0]).join(" ")) as string[]).toEqual(pkg.scripts.start.split(" "));
  });

  it("the DevBox image has git, bash, the agent CLIs, and the agent as entrypoint", () => {
    const stage = finalStage("images/devbox/Dockerfile");
    const runs = find(stage, "RUN").map((run) => argsOf(run).join(" "));
    expect(runs.join("\n")).toMatch(/apt-get install .*\bbash\b.*\bgit\b/);
    expect(runs.join("\n")).toContain('"@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}"');
    expect(runs.join("\n")).toContain('"@openai/codex@${CODEX_VERSION}"');
    expect(argsOf(find(stage, "ENTRYPOINT")[0])).toEqual(['["/usr/local/bin/devbox-entrypoint"]']);
    const entrypoint = read("images/devbox/entrypoint.sh");
    expect(entrypoint).toMatch(
      /\nexec clustercode devbox --api "\$CLUSTERCODE_API_URL" "\$\{identity\[@\]\}" --token-stdin <<<"\$token"\n$/,
    );
    // A DevBox's task is its agent; a warm task's is the agent in warm mode, until its claim.
    expect(entrypoint).toContain('identity=(--devbox "$CLUSTERCODE_DEVBOX_ID")');
    expect(entrypoint).toContain('identity=(--warm "$CLUSTERCODE_WARM_ID")');
  });

  it("the DevBox image pins the agent CLIs at the versions package.json pins (and the contract tests run)", () => {
    const pinned = (JSON.parse(read("package.json")) as { devDependencies: Record<string, string> })
      .devDependencies;
    const defaults = new Map(
      find(finalStage("images/devbox/Dockerfile"), "ARG").map((arg) => {
        const [name = "", value = ""] = (argsOf(arg)[0] ?? "").split("=");
        return [name, value] as const;
      }),
    );
    for (const [arg, pkg] of [
      ["CLAUDE_CODE_VERSION", "@anthropic-ai/claude-code"],
      ["CODEX_VERSION", "@openai/codex"],
    ] as const) {
      expect(pinned[pkg], `${pkg} must be an exact version in devDependencies`).toMatch(
        /^\d+\.\d+\.\d+$/,
      );
      expect(defaults.get(arg), `ARG ${arg} in images/devbox/Dockerfile`).toBe(pinned[pkg]);
    }
  });

  it("keeps the build context small", () => {
    const ignored = read(".dockerignore").split("\n");
    for (const entry of ["node_modules", "dist", ".git", "infra", "test"]) {
      expect(ignored).toContain(entry);
    }
  });
});

describe("shell scripts", () => {
  const hasShellcheck = spawnSync("shellcheck", ["--version"]).status === 0;

  it.for(SHELL_SCRIPTS)("shellcheck finds nothing in %s", (path, context) => {
    if (!hasShellcheck) context.skip("shellcheck is not installed here (.ci/run installs it)");
    const output = execFileSync("shellcheck", ["--format=gcc", "--shell=bash", join(ROOT, path)], {
      encoding: "utf8",
    }).trim();
    expect(output).toBe("");
  });
});
