import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { OutputTail } from "../output-tail.js";
import { releasePidFile, takePidFile } from "./pid-file.js";
import { runProcess } from "../process-runner.js";
import { withoutCredentials } from "./repository-url.js";

/** The hub's git route: `<api>/internal/devboxes/<id>/git/<owner>/<repo>.git`. */
const HUB_GIT_ROUTE = /\/internal\/devboxes\/[^/]+\/git\/(.+?)(?:\.git)?\/?$/;
const OWNER_REPO = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}\/[A-Za-z0-9._][A-Za-z0-9._-]{0,99}$/;

/**
 * The name one repository's mirror and setup cache go by on this host: `<owner>/<repo>` when the
 * repository is GitHub's or the hub's route to it, else a hash of its address. The hub's route
 * names a different DevBox on every claim, so the DevBox id must not be part of the name.
 */
export function repositoryKey(repository: string): string {
  const plain = withoutCredentials(repository);
  const fromHub = HUB_GIT_ROUTE.exec(plain)?.[1];
  const fromUrl = /^https?:\/\/[^/]+\/(.+?)(?:\.git)?\/?$/.exec(plain)?.[1];
  const name = fromHub ?? fromUrl;
  if (name !== undefined && OWNER_REPO.test(name) && !name.split("/").includes("..")) return name;
  return `local/${createHash("sha256").update(plain).digest("hex").slice(0, 24)}`;
}

/** `<stateDir>/mirrors/<owner>/<repo>.git`: the bare mirror of `repository` on this host. */
export function mirrorPath(stateDir: string, repository: string): string {
  return join(stateDir, "mirrors", `${repositoryKey(repository)}.git`);
}

/**
 * The mirror a claim of `request` clones from and binds into its sandbox: named by the
 * repository as the runtime names it (`owner/name`, or a local path, hashed) when the request
 * says, so that warm DevBoxes, made before any claim and with no hub route to name, share it;
 * else by the address it is cloned from.
 */
export function mirrorOf(stateDir: string, request: { repository: string; repo?: string }): string {
  return request.repo === undefined
    ? mirrorPath(stateDir, request.repository)
    : repoMirrorPath(stateDir, request.repo);
}

/** `<stateDir>/mirrors/<key>.git`: the bare mirror of `repo` (`owner/name`, or a local path). */
export function repoMirrorPath(stateDir: string, repo: string): string {
  const plain = withoutCredentials(repo);
  const key =
    OWNER_REPO.test(plain) && !plain.split("/").includes("..")
      ? plain
      : `local/${createHash("sha256").update(plain).digest("hex").slice(0, 24)}`;
  return join(stateDir, "mirrors", `${key}.git`);
}

/** How long a claim waits for another process's fetch of the same mirror before going alone. */
const LOCK_WAIT_MS = 120_000;

const inFlight = new Map<string, Promise<void>>();
/** When the last fetch of each mirror that succeeded in this process started. */
const fetchedAt = new Map<string, number>();

/**
 * How long after a fetch a claim clones from a mirror without fetching it again (see
 * {@link refreshMirror}); 0: always fetch.
 */
export const MIRROR_FRESH_MS = 30_000;

/**
 * Fetches every branch of `repository` into the bare mirror at `mirror` (created on first use),
 * so that a clone from it needs nothing from the network; not again when this process fetched
 * it less than `freshMs` ago (default 0: always). Claims in this process that arrive
 * while a fetch runs share it; other processes wait on a lock directory. `auth` is environment
 * (never argv, never the mirror's config): the mirror holds no credentials and no remote URL.
 * Throws an Error with git's output when the fetch fails.
 */
export function refreshMirror(
  mirror: string,
  repository: string,
  env: Record<string, string>,
  freshMs = 0,
): Promise<void> {
  const running = inFlight.get(mirror);
  if (running !== undefined) return running;
  const started = Date.now();
  if (started - (fetchedAt.get(mirror) ?? -Infinity) < freshMs && existsSync(join(mirror, "HEAD")))
    return Promise.resolve();
  const fetching = withLock(`${mirror}.lock`, () => fetchMirror(mirror, repository, env))
    .then(() => void fetchedAt.set(mirror, started))
    .finally(() => inFlight.delete(mirror));
  inFlight.set(mirror, fetching);
  return fetching;
}

async function fetchMirror(
  mirror: string,
  repository: string,
  env: Record<string, string>,
): Promise<void> {
  if (!existsSync(join(mirror, "HEAD"))) {
    await rm(mirror, { recursive: true, force: true });
    await mkdir(mirror, { recursive: true });
    await git(["init", "--quiet", "--bare", mirror], dirname(mirror), env);
    // Partial clones from the mirror need its upload-pack to filter; a gc would drop objects
    // that blobless checkouts still fetch lazily from it.
    const settings: [string, string][] = [
      ["uploadpack.allowFilter", "true"],
      ["uploadpack.allowAnySHA1InWant", "true"],
      ["gc.auto", "0"],
    ];
    for (const [key, value] of settings) {
      await git(["config", key, value], mirror, env);
    }
  }
  // The address is given on each fetch, never stored: it may carry a token, and the hub's route
  // names the DevBox that asked.
  await git(
    [
      "fetch",
      "--quiet",
      "--prune",
      "--no-tags",
      // FETCH_HEAD would record the address, token and all.
      "--no-write-fetch-head",
      "--",
      repository,
      "+refs/heads/*:refs/heads/*",
    ],
    mirror,
    { ...env, GIT_TERMINAL_PROMPT: "0" },
  );
}

/**
 * Runs `work` holding the lock file `lock`, waiting (bounded) for another live process that
 * holds it. A lock left by a process that died while fetching (a replica killed with its
 * DevBoxes) is taken over at once.
 */
async function withLock<T>(lock: string, work: () => Promise<T>): Promise<T> {
  await mkdir(dirname(lock), { recursive: true });
  const deadline = Date.now() + LOCK_WAIT_MS;
  while (!(await takePidFile(lock))) {
    if (Date.now() > deadline) throw new Error(`the mirror lock ${lock} is held too long`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  try {
    return await work();
  } finally {
    await releasePidFile(lock);
  }
}

/** Runs git; throws an Error with its output when it fails. */
export async function git(args: string[], cwd: string, env: Record<string, string>): Promise<void> {
  const output = new OutputTail(8 * 1024);
  const { exitCode } = await runProcess({
    file: "git",
    args,
    cwd,
    env,
    signal: new AbortController().signal,
    output,
  });
  if (exitCode !== 0) throw new Error(`git ${args[0]} exited with ${exitCode}: ${output.text()}`);
}
