import { spawnSync } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import { DevBoxError } from "../errors.js";

/** The container engines the container executor drives (their `run` flags are the same). */
export const CONTAINER_ENGINES = ["docker", "podman"] as const;
/** One of {@link CONTAINER_ENGINES}. */
export type ContainerEngineKind = (typeof CONTAINER_ENGINES)[number];

/** An engine that answered: which, its binary, and whether it runs containers rootless. */
export interface ContainerEngine {
  kind: ContainerEngineKind;
  binary: string;
  /** Rootless podman: the host's uid is root in the container unless `--userns keep-id`. */
  rootless: boolean;
}

/** The host's choice: `CLUSTERCODE_CONTAINER_ENGINE` (decoded) and the PATH engines are on. */
export interface EngineChoice {
  engine?: ContainerEngineKind | undefined;
  path?: string | undefined;
}

/** Why each engine looked at did not answer, for the error that names what to install. */
export type EngineProblems = Partial<Record<ContainerEngineKind, string>>;

/**
 * The engine that runs containers here: the one named, else the first of docker and podman
 * on PATH whose daemon (or podman itself) answers; with `problems`, why the others did not.
 */
export function findEngine(
  choice: EngineChoice,
  problems: EngineProblems = {},
): ContainerEngine | undefined {
  const kinds = choice.engine === undefined ? CONTAINER_ENGINES : [choice.engine];
  for (const kind of kinds) {
    const binary = onPath(kind, choice.path ?? "");
    if (binary === undefined) {
      problems[kind] = "not found on PATH";
      continue;
    }
    // `info` needs the daemon (docker) or the storage (podman): a CLI alone runs nothing.
    const format = kind === "podman" ? "{{.Host.Security.Rootless}}" : "{{.ServerVersion}}";
    const result = spawnSync(binary, ["info", "--format", format], {
      encoding: "utf8",
      timeout: 15_000,
    });
    if (result.status === 0) {
      return { kind, binary, rootless: kind === "podman" && result.stdout.trim() === "true" };
    }
    const why = result.stderr?.trim() || result.error?.message || `exit ${result.status}`;
    problems[kind] = `does not answer: ${why.split("\n")[0]?.slice(0, 200)}`;
  }
  return undefined;
}

/**
 * The engine for `CLUSTERCODE_EXECUTOR=container`; throws a `sandbox-unavailable`
 * {@link DevBoxError} saying what is missing and pointing to `clustercode doctor`.
 */
export function chooseEngine(choice: EngineChoice): ContainerEngine {
  const problems: EngineProblems = {};
  const engine = findEngine(choice, problems);
  if (engine !== undefined) return engine;
  const seen = Object.entries(problems)
    .map(([kind, why]) => `${kind} ${why}`)
    .join("; ");
  throw new DevBoxError(
    "sandbox-unavailable",
    `CLUSTERCODE_EXECUTOR=container runs DevBoxes in Docker or Podman, but none answers (${seen}): install and start Docker Desktop or Podman (macOS: podman machine start); run clustercode doctor to check this machine`,
  );
}

/** `name` in a directory of `path` when it is executable there. */
export function onPath(name: string, path: string): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (dir === "") continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}
