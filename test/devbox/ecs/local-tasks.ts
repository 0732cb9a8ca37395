/**
 * Runs the "container" of each fake ECS task as local processes: the DevBox image's real
 * entrypoint (`images/devbox/entrypoint.sh`) with the task's environment, a `clustercode` on
 * PATH that is the built CLI, and git told to fetch GitHub URLs from a local repository.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, openSync, closeSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { FakeTask, TaskLauncher } from "./endpoint.js";

const ROOT = resolve(import.meta.dirname, "..", "..", "..");
const ENTRYPOINT = join(ROOT, "images", "devbox", "entrypoint.sh");
const CLI = join(ROOT, "dist", "cli", "main.js");

/** Starts each task's entrypoint in its own directory; kills its process group on stop. */
export class LocalTaskLauncher implements TaskLauncher {
  readonly #processes = new Map<string, ChildProcess>();
  readonly #bin: string;
  /** Each task's directory, by task ARN (its `agent.log` holds the container's output). */
  readonly dirs = new Map<string, string>();

  constructor(
    private readonly root: string,
    /** GitHub clone URL → local repository path. */
    private readonly repositories: Record<string, string>,
  ) {
    this.#bin = join(root, "bin");
    mkdirSync(this.#bin, { recursive: true });
    const shim = join(this.#bin, "clustercode");
    writeFileSync(shim, `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`, { mode: 0o755 });
  }

  launch(task: FakeTask): Promise<void> {
    const dir = mkdtempSync(join(this.root, "task-"));
    const home = join(dir, "home");
    mkdirSync(home);
    this.dirs.set(task.taskArn, dir);
    const rewrites = Object.entries(this.repositories);
    const git: Record<string, string> = { GIT_CONFIG_COUNT: String(rewrites.length) };
    rewrites.forEach(([url, path], index) => {
      git[`GIT_CONFIG_KEY_${index}`] = `url.${path}.insteadOf`;
      git[`GIT_CONFIG_VALUE_${index}`] = url;
    });
    const log = openSync(join(dir, "agent.log"), "a");
    const child = spawn("bash", [ENTRYPOINT], {
      cwd: dir,
      env: {
        PATH: `${this.#bin}:${process.env.PATH ?? ""}`,
        HOME: home,
        ...git,
        ...task.environment,
        CLUSTERCODE_WORKSPACE: join(dir, "workspace"),
      },
      detached: true,
      stdio: ["ignore", log, log],
    });
    closeSync(log);
    this.#processes.set(task.taskArn, child);
    return new Promise((done, fail) => {
      child.once("spawn", () => done());
      child.once("error", fail);
    });
  }

  async kill(task: FakeTask): Promise<void> {
    const child = this.#processes.get(task.taskArn);
    this.#processes.delete(task.taskArn);
    if (child?.pid === undefined || child.exitCode !== null || child.signalCode !== null) {
      // The agent may be gone while the token refresher it left behind still sleeps.
      if (child?.pid !== undefined) killGroup(child.pid);
      return;
    }
    const exited = new Promise((done) => child.once("exit", done));
    killGroup(child.pid);
    await exited;
  }
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, "SIGKILL");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
  }
}
