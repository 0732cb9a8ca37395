import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { join } from "node:path";
import { createGunzip } from "node:zlib";
import { gitText, runGit } from "../git/git-process.js";
import { answer } from "../git/git-service.js";
import { FLUSH, pktLine } from "../git/pkt-line.js";
import type { GitUpstream } from "../git/receive.js";
import { shareObjects } from "../git/shared-objects.js";

/** `/<owner>/<name>.git/<endpoint>`: what a warm task may ask of git (fetches only). */
const ENDPOINT = /^\/([^?]+)\.git\/(info\/refs|git-upload-pack)(?:\?.*)?$/;

/**
 * Read-only git smart HTTP for warm tasks: each repository's default branch, and nothing else,
 * from a staging repository per (repository, branch) that holds only that branch (its objects
 * borrowed from the hub's shared store). A push, another branch, another repository: refused.
 */
export class WarmGit {
  readonly #stateDir: string;
  readonly #upstreamOf: (repo: string) => Promise<GitUpstream>;
  readonly #locks = new Map<string, Promise<unknown>>();

  constructor(stateDir: string, upstreamOf: (repo: string) => Promise<GitUpstream>) {
    this.#stateDir = stateDir;
    this.#upstreamOf = upstreamOf;
  }

  /** Answers one git request `path` (after `/git`) of a warm task of `repo` at `branch`. */
  async handle(
    request: IncomingMessage,
    response: ServerResponse,
    identity: { repo: string; branch: string },
    path: string,
  ): Promise<void> {
    const match = ENDPOINT.exec(path);
    // Another repository's route is as unknown to this identity as a route that does not exist.
    if (match === null || match[1] !== identity.repo.replace(/\.git$/, "")) {
      return answer(response, 404, "text/plain", Buffer.from("not found\n"));
    }
    const service = new URL(path, "http://hub").searchParams.get("service");
    if (match[2] === "info/refs" && request.method === "GET") {
      if (service !== "git-upload-pack") {
        return answer(response, 403, "text/plain", Buffer.from("read-only\n"));
      }
      const dir = await this.#exclusive(identity, () => this.#sync(identity));
      const refs = await runGit(["upload-pack", "--stateless-rpc", "--advertise-refs", dir], {
        cwd: dir,
      });
      const head = Buffer.concat([pktLine(`# service=${service}\n`), FLUSH]);
      const type = `application/x-${service}-advertisement`;
      return answer(response, 200, type, Buffer.concat([head, refs.stdout]));
    }
    if (match[2] === "git-upload-pack" && request.method === "POST") {
      const dir = this.#dir(identity);
      if (!existsSync(dir)) return answer(response, 409, "text/plain", Buffer.from("refs first\n"));
      const input =
        request.headers["content-encoding"] === "gzip" ? request.pipe(createGunzip()) : request;
      const result = await runGit(["upload-pack", "--stateless-rpc", dir], { cwd: dir, input });
      return answer(response, 200, "application/x-git-upload-pack-result", result.stdout);
    }
    return answer(response, 405, "text/plain", Buffer.from("read-only\n"));
  }

  #dir(identity: { repo: string; branch: string }): string {
    const key = `${identity.repo}\0${identity.branch}`;
    const name = createHash("sha256").update(key).digest("hex").slice(0, 32);
    return join(this.#stateDir, "hub-git", "warm", `${name}.git`);
  }

  /** Makes (when new) and refreshes the staging repository of the default branch alone. */
  async #sync(identity: { repo: string; branch: string }): Promise<string> {
    const dir = this.#dir(identity);
    const upstream = await this.#upstreamOf(identity.repo);
    const env = { GIT_DIR: dir };
    const ref = `refs/heads/${identity.branch}`;
    if (!existsSync(join(dir, "HEAD"))) {
      await mkdir(dir, { recursive: true });
      await gitText(["init", "--bare", "--quiet", dir], { cwd: dir });
      await gitText(["symbolic-ref", "HEAD", ref], { cwd: dir, env });
      await shareObjects(this.#stateDir, dir, upstream);
    }
    await gitText(
      [
        "fetch",
        "--quiet",
        "--no-tags",
        "--no-write-fetch-head",
        "--",
        upstream.url,
        `+${ref}:${ref}`,
      ],
      { cwd: dir, env: { ...upstream.env, ...env } },
    );
    return dir;
  }

  /** Runs `work` after every earlier sync of the same staging repository ended. */
  async #exclusive<T>(identity: { repo: string; branch: string }, work: () => Promise<T>) {
    const key = this.#dir(identity);
    const previous = this.#locks.get(key) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(work);
    this.#locks.set(key, next);
    return next;
  }
}
