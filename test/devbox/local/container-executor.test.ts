/**
 * `CLUSTERCODE_EXECUTOR=container`: the executor clones the checkout on the host as for local
 * DevBoxes, opens the hub relay, and starts the engine with the DevBox's walls. No image
 * registry is reachable in CI, so the engine here is a stand-in `podman` that records what it
 * was asked to run (argv, environment, stdin) instead of running the DevBox image.
 */
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  writeFileSync,
} from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ContainerExecutor } from "../../../src/devbox/container/executor.js";
import { DevBoxHub } from "../../../src/devbox/hub/hub.js";

const root = realpathSync(mkdtempSync(join(tmpdir(), "clustercode-container-")));
const upstream = join(root, "upstream.git");
const bin = join(root, "bin");
const out = join(root, "out");
const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, { cwd, encoding: "utf8", stdio: "pipe" }).trim();

beforeAll(() => {
  const seed = join(root, "seed");
  git(root, "init", "--quiet", "--initial-branch=main", seed);
  writeFileSync(join(seed, "README"), "hello\n");
  git(seed, "add", ".");
  git(seed, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", "one");
  git(root, "clone", "--quiet", "--bare", seed, upstream);
  mkdirSync(bin);
  mkdirSync(out);
  // Answers `info` as rootful podman does, and records `run` and `rm`.
  writeFileSync(
    join(bin, "podman"),
    `#!/bin/sh
case "$1" in
  info) echo false ;;
  rm) echo "$@" >> "${out}/rm" ;;
  run) printf '%s\\n' "$@" > "${out}/argv"; env > "${out}/env"; cat > "${out}/stdin"; touch "${out}/done" ;;
esac
`,
  );
  chmodSync(join(bin, "podman"), 0o755);
});
afterAll(() => rm(root, { recursive: true, force: true }));

/** The value after each occurrence of `flag`. */
function valuesOf(args: string[], flag: string): string[] {
  return args.flatMap((arg, at) => (arg === flag ? [args[at + 1] ?? ""] : []));
}

async function recorded(): Promise<{ argv: string[]; env: Map<string, string>; stdin: string }> {
  for (let i = 0; i < 500 && !existsSync(join(out, "done")); i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const argv = readFileSync(join(out, "argv"), "utf8").split("\n").slice(0, -1);
  const env = new Map(
    readFileSync(join(out, "env"), "utf8")
      .split("\n")
      .filter((line) => line.includes("="))
      .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
  );
  return { argv, env, stdin: readFileSync(join(out, "stdin"), "utf8") };
}

describe("the container executor", () => {
  it("runs the DevBox image walled in, with neither the hub token nor a real key in argv or environment", async () => {
    const stateDir = join(root, "state");
    const hub = new DevBoxHub({
      onEvent: () => {},
      lapseMs: 3000,
      git: {
        stateDir: join(stateDir, "hub-git"),
        upstreamOf: () => Promise.resolve({ url: upstream, env: {} }),
        policyOf: () =>
          Promise.resolve({ runBranch: "clustercode/7-1", allowWorkflowChanges: false }),
      },
    });
    const executor = new ContainerExecutor({
      stateDir,
      engine: "podman",
      image: "clustercode-devbox",
      env: {
        ...process.env,
        PATH: `${bin}${delimiter}${process.env.PATH ?? ""}`,
        GITHUB_TOKEN: "ghp_real_github_token",
        ANTHROPIC_API_KEY: "sk-ant-real-key",
      },
    });
    try {
      const apiUrl = await hub.listen();
      const { token } = hub.register({ devboxId: "run7-box1", runId: "run7" });
      await executor.start({
        devboxId: "run7-box1",
        runId: "run7",
        apiUrl,
        token,
        repository: hub.gitUrl("run7-box1", "octo/repo"),
        spec: {
          branch: "clustercode/7-1",
          baseBranch: "main",
          setup: [],
          secrets: [],
          memoryMiB: 3072,
        },
        providerEnv: { ANTHROPIC_API_KEY: "placeholder", ANTHROPIC_BASE_URL: `${apiUrl}/provider` },
      });
      const { argv, env, stdin } = await recorded();
      const paths = executor.paths("run7-box1");

      // The checkout was cloned on the host, and is what the container works in.
      expect(readFileSync(join(paths.checkout, "README"), "utf8")).toBe("hello\n");
      expect(valuesOf(argv, "--workdir")).toEqual([paths.checkout]);
      expect(argv).toContain("clustercode-devbox");
      expect(argv).toContain("--read-only");
      expect(valuesOf(argv, "--cap-drop")).toEqual(["ALL"]);
      expect(valuesOf(argv, "--security-opt")).toEqual(["no-new-privileges"]);
      expect(valuesOf(argv, "--network")).toEqual(["none"]);
      expect(valuesOf(argv, "--memory")).toEqual(["3072m"]);
      expect(valuesOf(argv, "--pids-limit")).toHaveLength(1);
      const [uid] = valuesOf(argv, "--user");
      expect(uid).toMatch(/^\d+:\d+$/);
      expect(uid?.startsWith("0:")).toBe(false);
      expect(valuesOf(argv, "--mount")).toContain(`type=bind,src=${paths.dir},dst=${paths.dir}`);

      // The hub token goes on stdin only; no GitHub token, the provider key a placeholder.
      expect(stdin.trim()).toBe(token);
      expect(argv.join(" ")).not.toContain(token);
      expect([...env.values()].join("\n")).not.toContain(token);
      expect(env.has("GITHUB_TOKEN")).toBe(false);
      expect(env.get("ANTHROPIC_API_KEY")).toBe("placeholder");
      expect(argv.join(" ")).not.toContain("sk-ant-real-key");
      // The agent's variables reach the container by name, the values from the engine's env.
      expect(valuesOf(argv, "--env")).toContain("ANTHROPIC_API_KEY");
      expect(valuesOf(argv, "--env")).toContain("CLUSTERCODE_RUN_ID");
      // The only way out: the relay's socket, inside the bound DevBox directory.
      const socket = env.get("CLUSTERCODE_HUB_SOCKET") ?? "";
      expect(socket.startsWith(`${paths.dir}/`)).toBe(true);
      expect(existsSync(socket)).toBe(true);
      expect(env.get("HTTPS_PROXY")).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

      await executor.stop("run7-box1");
      expect(readFileSync(join(out, "rm"), "utf8")).toContain("rm --force clustercode-run7-box1");
      expect(existsSync(socket)).toBe(false);
    } finally {
      await executor.stopAll();
      await hub.close();
    }
  });

  it("says what is missing when no engine answers, and points to clustercode doctor", () => {
    const executor = new ContainerExecutor({
      stateDir: join(root, "state-none"),
      image: "clustercode-devbox",
      env: { PATH: join(root, "empty-bin") },
    });
    expect(() => executor.engine()).toThrow(/Docker or Podman.*clustercode doctor/);
  });
});
