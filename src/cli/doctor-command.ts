import { spawnSync } from "node:child_process";
import { findEngine, onPath, type EngineProblems } from "../devbox/container/engine.js";
import { chooseIsolation } from "../devbox/local/sandbox.js";
import { EXIT, parseOptions, UsageError, type Command, type CommandIo } from "./command.js";

/** The oldest Node.js major the CLI runs on (`engines` in package.json). */
const NODE_MAJOR = 22;

/** One prerequisite: whether it is there, what was found, and what to install when not. */
interface Check {
  ok: boolean;
  line: string;
  fix?: string;
}

/**
 * `clustercode doctor`: checks this machine's prerequisites (Node.js, git, bubblewrap and its
 * namespaces, a container engine), says what to install per OS and which executor DevBoxes will
 * use here. Exit 1 when that executor cannot run DevBoxes.
 */
const doctor: Command = async (args, io) => {
  const { positionals } = parseOptions(args, {});
  if (positionals.length > 0)
    throw new UsageError("doctor takes no arguments", { pointToHelp: true });
  const path = io.settings.devboxes.path ?? "";
  const bubblewrap = bubblewrapCheck(io);
  const engine = engineCheck(io);
  const checks = [nodeCheck(), gitCheck(path), bubblewrap, engine];
  for (const check of checks) {
    io.stdout.write(`${check.ok ? "✓" : "✗"} ${check.line}\n`);
    if (!check.ok && check.fix !== undefined) io.stdout.write(`    ${check.fix}\n`);
  }
  const verdict = executorVerdict(io, bubblewrap.ok, engine.ok);
  io.stdout.write(`\n${verdict.line}\n`);
  const basics = checks.slice(0, 2).every((check) => check.ok);
  return Promise.resolve(basics && verdict.ok ? EXIT.ok : EXIT.notOk);
};
export default doctor;

function nodeCheck(): Check {
  const version = process.versions.node;
  const ok = Number(version.split(".")[0]) >= NODE_MAJOR;
  return {
    ok,
    line: `Node.js ${version} (${NODE_MAJOR} or later)`,
    fix: `install Node.js ${NODE_MAJOR} or later (https://nodejs.org, or nvm install ${NODE_MAJOR})`,
  };
}

function gitCheck(path: string): Check {
  const git = onPath("git", path);
  const version =
    git === undefined ? undefined : spawnSync(git, ["--version"], { encoding: "utf8" }).stdout;
  const ok = version !== undefined && version.startsWith("git version");
  return {
    ok,
    line: ok ? (version?.trim() ?? "git") : "git: not found on PATH",
    fix: forOs("apt-get install git", "xcode-select --install (or brew install git)"),
  };
}

/** Bubblewrap, probed as local DevBoxes use it (the run's own check). */
function bubblewrapCheck(io: CommandIo): Check {
  const { bwrap, path } = io.settings.devboxes;
  try {
    const isolation = chooseIsolation({ bwrap, path }, process.getuid?.() === 0);
    const where = isolation.kind === "bubblewrap" ? isolation.bwrap : "";
    return { ok: true, line: `bubblewrap: ${where} creates the DevBoxes' namespaces` };
  } catch (error) {
    const why = (error as Error).message.split(":")[0] ?? "";
    return {
      ok: false,
      line: `bubblewrap: ${why}`,
      fix: forOs(
        why.includes("not found")
          ? "apt-get install bubblewrap (or dnf install bubblewrap)"
          : "enable unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces > 0)",
        "macOS has no bubblewrap: use a container engine instead (below)",
      ),
    };
  }
}

/** A container engine that answers, for `CLUSTERCODE_EXECUTOR=container`. */
function engineCheck(io: CommandIo): Check {
  const { containerEngine, path } = io.settings.devboxes;
  const problems: EngineProblems = {};
  const engine = findEngine({ engine: containerEngine, path }, problems);
  const seen = Object.entries(problems).map(([kind, why]) => `${kind} ${why}`);
  return {
    ok: engine !== undefined,
    line:
      engine === undefined
        ? `container engine: ${seen.join("; ")}`
        : `container engine: ${engine.kind} answers${engine.rootless ? " (rootless)" : ""}${seen.length > 0 ? ` (${seen.join("; ")})` : ""}`,
    fix: forOs(
      "only needed without bubblewrap: apt-get install podman (or Docker Engine)",
      "install Docker Desktop or Podman (brew install podman; podman machine init; podman machine start), then set CLUSTERCODE_EXECUTOR=container",
    ),
  };
}

/** Which executor DevBoxes will use here, and whether it can run them. */
function executorVerdict(
  io: CommandIo,
  bubblewrap: boolean,
  engine: boolean,
): { ok: boolean; line: string } {
  const { executor, unsafeLocalDevBox, containerImage } = io.settings.devboxes;
  if (executor === "ecs") {
    return { ok: true, line: "DevBoxes run as ECS tasks (CLUSTERCODE_EXECUTOR=ecs): not here." };
  }
  if (executor === "container") {
    return engine
      ? {
          ok: true,
          line: `DevBoxes here: containers of the image ${containerImage} (CLUSTERCODE_EXECUTOR=container; build it: docker build -f images/devbox/Dockerfile -t ${containerImage} .).`,
        }
      : {
          ok: false,
          line: "No usable executor: CLUSTERCODE_EXECUTOR=container, but no engine answers.",
        };
  }
  if (unsafeLocalDevBox === true) {
    return {
      ok: true,
      line: "DevBoxes here: local processes WITHOUT isolation (CLUSTERCODE_UNSAFE_LOCAL_DEVBOX=1).",
    };
  }
  if (bubblewrap) return { ok: true, line: "DevBoxes here: local processes under bubblewrap." };
  return {
    ok: false,
    line: engine
      ? "No usable executor: bubblewrap is missing; set CLUSTERCODE_EXECUTOR=container to run DevBoxes in the container engine."
      : "No usable executor: install bubblewrap (Linux) or a container engine with CLUSTERCODE_EXECUTOR=container (macOS).",
  };
}

/** The fix for this OS: Linux's, or macOS's. */
function forOs(linux: string, macos: string): string {
  return process.platform === "darwin" ? macos : linux;
}
