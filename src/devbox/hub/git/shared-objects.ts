import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { gitText } from "./git-process.js";
import type { GitUpstream } from "./receive.js";

const inFlight = new Map<string, Promise<void>>();

/**
 * Makes the new staging repository `dir` borrow the objects of one object store per upstream
 * repository (`<stateDir>/hub-git/shared/<hash>.git`), fetched from the upstream first, so the
 * staging fetch that follows transfers only what is new since: a claim no longer costs a full
 * fetch of the repository. Staging repositories of the same upstream fetching at once share
 * one fetch. The store has no remote and no FETCH_HEAD (the address is given on each fetch,
 * the credentials in its environment), never runs gc (staging repositories borrow its
 * objects), and holds only what the upstream has: pushes land in the staging repository.
 */
export async function shareObjects(
  stateDir: string,
  dir: string,
  upstream: GitUpstream,
): Promise<void> {
  const name = createHash("sha256").update(withoutUserInfo(upstream.url)).digest("hex");
  const shared = join(stateDir, "hub-git", "shared", `${name.slice(0, 32)}.git`);
  let fetching = inFlight.get(shared);
  if (fetching === undefined) {
    fetching = refresh(shared, upstream).finally(() => inFlight.delete(shared));
    inFlight.set(shared, fetching);
  }
  await fetching;
  await mkdir(join(dir, "objects", "info"), { recursive: true });
  await writeFile(join(dir, "objects", "info", "alternates"), `${join(shared, "objects")}\n`);
}

async function refresh(shared: string, upstream: GitUpstream): Promise<void> {
  const env = { GIT_DIR: shared };
  if (!existsSync(join(shared, "HEAD"))) {
    await mkdir(shared, { recursive: true });
    await gitText(["init", "--bare", "--quiet", shared], { cwd: shared });
    await gitText(["config", "gc.auto", "0"], { cwd: shared, env });
  }
  await gitText(
    [
      "fetch",
      "--quiet",
      "--prune",
      "--no-tags",
      "--no-write-fetch-head",
      "--",
      upstream.url,
      "+refs/heads/*:refs/heads/*",
      "+refs/tags/*:refs/tags/*",
    ],
    { cwd: shared, env: { ...upstream.env, ...env } },
  );
}

/** An http(s) address without its user and password; others unchanged. */
function withoutUserInfo(url: string): string {
  if (!/^https?:\/\//.test(url)) return url;
  const parsed = new URL(url);
  parsed.username = "";
  parsed.password = "";
  return parsed.toString();
}
