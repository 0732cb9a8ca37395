import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { join } from "node:path";
import { createGunzip } from "node:zlib";
import type { Readable } from "node:stream";
import { gitText, runGit } from "./git-process.js";
import { FLUSH, parseReceiveRequest, pktLine, type ReceiveRequest } from "./pkt-line.js";
import { DevBoxError } from "../../errors.js";
import { moveBranch, type BranchMove, type BranchMoved } from "./branch-move.js";
import { refRefusal, type GitPolicy } from "./push-policy.js";
import { receivePush, type GitUpstream } from "./receive.js";
import { shareObjects } from "./shared-objects.js";

export type { GitUpstream } from "./receive.js";
export type { GitPolicy } from "./push-policy.js";
export type { BranchMove, BranchMoved } from "./branch-move.js";

/** How the hub serves git to DevBoxes. */
export interface HubGitOptions {
  /** Staging repositories live in `<stateDir>/hub-git/`. */
  stateDir: string;
  /** Where a run's repository is, with the credentials the hub (only) adds. */
  upstreamOf: (runId: string) => Promise<GitUpstream>;
  /** What a run's DevBoxes may push. */
  policyOf: (runId: string) => Promise<GitPolicy>;
}

/** A push the hub refused: recorded by the runtime, never with a secret value in it. */
export interface PushRefusal {
  devboxId: string;
  ref: string;
  reason: string;
}

/** The DevBox a git request comes from, once the hub authenticated it. */
export interface GitCaller {
  devboxId: string;
  runId: string;
  secretValues: readonly string[];
}

/** The largest push the hub takes. */
const MAX_PUSH_BYTES = 512 * 1024 * 1024;

/** `<anything>.git/<endpoint>`: the endpoints of git's smart HTTP protocol. */
const ENDPOINT = /^\/(?:[^?]*\.git)?\/(info\/refs|git-upload-pack|git-receive-pack)(?:\?.*)?$/;

const CAPABILITIES = "report-status delete-refs ofs-delta agent=clustercode-hub";

/**
 * Git smart HTTP for DevBoxes: clones and fetches are served from a per-DevBox staging mirror
 * of the run's repository (refreshed from upstream before each), pushes are received into a
 * quarantine, checked against the run's policy, and only the accepted ref updates are pushed
 * upstream with the credentials the hub holds.
 */
export class HubGit {
  readonly #options: HubGitOptions;
  readonly #locks = new Map<string, Promise<unknown>>();

  constructor(options: HubGitOptions) {
    this.#options = options;
  }

  /** Answers one git request `path` (after `/git`) of an authenticated DevBox. */
  async handle(
    request: IncomingMessage,
    response: ServerResponse,
    caller: GitCaller,
    path: string,
    onRefused: (refusal: PushRefusal) => void,
  ): Promise<void> {
    const endpoint = ENDPOINT.exec(path)?.[1];
    const service = new URL(path, "http://hub").searchParams.get("service");
    if (endpoint === "info/refs" && request.method === "GET") {
      return this.#advertiseRefs(response, caller, service);
    }
    if (endpoint === "git-upload-pack" && request.method === "POST") {
      return this.#uploadPack(request, response, caller);
    }
    if (endpoint === "git-receive-pack" && request.method === "POST") {
      return this.#receivePack(request, response, caller, onRefused);
    }
    return answer(response, 404, "text/plain", Buffer.from("not found\n"));
  }

  /** `GET info/refs?service=…`: the refs of the freshly synced staging mirror. */
  async #advertiseRefs(
    response: ServerResponse,
    caller: GitCaller,
    service: string | null,
  ): Promise<void> {
    if (service !== "git-upload-pack" && service !== "git-receive-pack") {
      return answer(response, 403, "text/plain", Buffer.from("smart HTTP only\n"));
    }
    const advertisement = await this.#exclusive(caller.devboxId, async () => {
      const dir = await this.#sync(caller);
      return service === "git-upload-pack"
        ? (
            await runGit(["upload-pack", "--stateless-rpc", "--advertise-refs", dir], {
              cwd: dir,
            })
          ).stdout
        : await receiveAdvertisement(dir);
    });
    const head = Buffer.concat([pktLine(`# service=${service}\n`), FLUSH]);
    return answer(
      response,
      200,
      `application/x-${service}-advertisement`,
      Buffer.concat([head, advertisement]),
    );
  }

  /** `POST git-upload-pack`: a clone or fetch, served from the staging mirror. */
  async #uploadPack(
    request: IncomingMessage,
    response: ServerResponse,
    caller: GitCaller,
  ): Promise<void> {
    const dir = this.#dir(caller.devboxId);
    if (!existsSync(dir))
      return answer(response, 409, "text/plain", Buffer.from("fetch refs first\n"));
    const result = await runGit(["upload-pack", "--stateless-rpc", dir], {
      cwd: dir,
      input: bodyOf(request),
    });
    return answer(response, 200, "application/x-git-upload-pack-result", result.stdout);
  }

  /** `POST git-receive-pack`: a push, checked against the run's policy, refusals reported. */
  async #receivePack(
    request: IncomingMessage,
    response: ServerResponse,
    caller: GitCaller,
    onRefused: (refusal: PushRefusal) => void,
  ): Promise<void> {
    const body = await readAll(bodyOf(request), MAX_PUSH_BYTES);
    if (body === undefined)
      return answer(response, 413, "text/plain", Buffer.from("push too large\n"));
    const parsed = parseReceiveRequest(body);
    if (parsed === undefined)
      return answer(response, 400, "text/plain", Buffer.from("not a push\n"));
    const { outcomes, report } = await this.#exclusive(caller.devboxId, () =>
      this.#receiveInto(caller, parsed),
    );
    for (const outcome of outcomes) {
      if (outcome.refused !== undefined) {
        onRefused({ devboxId: caller.devboxId, ref: outcome.ref, reason: outcome.refused });
      }
    }
    return answer(response, 200, "application/x-git-receive-pack-result", report);
  }

  /** Receives a parsed push into the staging mirror and pushes what the policy accepts upstream. */
  async #receiveInto(caller: GitCaller, parsed: ReceiveRequest): ReturnType<typeof receivePush> {
    const dir = this.#dir(caller.devboxId);
    if (!existsSync(dir)) await this.#sync(caller);
    const [policy, upstream] = await Promise.all([
      this.#options.policyOf(caller.runId),
      this.#options.upstreamOf(caller.runId),
    ]);
    const received = await receivePush(dir, parsed, {
      policy,
      upstream,
      secretValues: caller.secretValues,
    });
    // The staging mirror learns what the upstream now has before the next request.
    await this.#fetch(dir, upstream);
    return received;
  }

  /**
   * Points run `runId`'s branch at its race winner's head upstream (see {@link moveBranch}):
   * only ever the run's own branch, from one of its variant branches, one move of a run at once.
   */
  async moveBranch(runId: string, move: BranchMove): Promise<BranchMoved> {
    const { runBranch } = await this.#options.policyOf(runId);
    if (
      move.branch !== runBranch ||
      refRefusal(`refs/heads/${move.from}`, runBranch) !== undefined
    ) {
      throw new DevBoxError("invalid-request", `run ${runId} may not move ${move.branch}`);
    }
    const upstream = await this.#options.upstreamOf(runId);
    const name = createHash("sha256").update(runId).digest("hex").slice(0, 32);
    const dir = join(this.#options.stateDir, "hub-git", "moves", `${name}.git`);
    // The scratch repository goes with the move: a move performed again makes it again.
    return this.#exclusive(`move:${runId}`, () =>
      moveBranch(this.#options.stateDir, dir, upstream, move).finally(() =>
        rm(dir, { recursive: true, force: true }),
      ),
    );
  }

  /** Removes a DevBox's staging repository (it is released or lost). */
  async forget(devboxId: string): Promise<void> {
    await this.#exclusive(devboxId, () =>
      rm(this.#dir(devboxId), { recursive: true, force: true }),
    );
    this.#locks.delete(devboxId);
  }

  #dir(devboxId: string): string {
    const name = createHash("sha256").update(devboxId).digest("hex").slice(0, 32);
    return join(this.#options.stateDir, "hub-git", `${name}.git`);
  }

  /** Creates (when new) and refreshes the DevBox's staging mirror; returns its directory. */
  async #sync(caller: GitCaller): Promise<string> {
    const dir = this.#dir(caller.devboxId);
    const upstream = await this.#options.upstreamOf(caller.runId);
    if (!existsSync(dir)) {
      await mkdir(dir, { recursive: true });
      await gitText(["init", "--bare", "--quiet", dir], { cwd: dir });
      // Asking the upstream for its HEAD does not wait for the shared store's fetch: a claim
      // pays for one round trip to the upstream here, not two in a row.
      const [symref] = await Promise.all([
        runGit(["ls-remote", "--symref", "--", upstream.url, "HEAD"], {
          cwd: dir,
          env: { ...upstream.env, GIT_DIR: dir },
        }),
        shareObjects(this.#options.stateDir, dir, upstream),
      ]);
      const head = /^ref: (refs\/heads\/[^\t\n]+)\tHEAD$/m.exec(symref.stdout.toString("utf8"));
      if (head?.[1] !== undefined) {
        await gitText(["symbolic-ref", "HEAD", head[1]], { cwd: dir, env: { GIT_DIR: dir } });
      }
    }
    await this.#fetch(dir, upstream);
    return dir;
  }

  async #fetch(dir: string, upstream: GitUpstream): Promise<void> {
    await gitText(
      [
        "fetch",
        "--quiet",
        "--prune",
        "--no-tags",
        "--",
        upstream.url,
        "+refs/heads/*:refs/heads/*",
        "+refs/tags/*:refs/tags/*",
      ],
      { cwd: dir, env: { ...upstream.env, GIT_DIR: dir } },
    );
  }

  /** Runs `work` after every earlier request of the same DevBox ended. */
  async #exclusive<T>(devboxId: string, work: () => Promise<T>): Promise<T> {
    const previous = this.#locks.get(devboxId) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(work);
    this.#locks.set(devboxId, next);
    return next;
  }
}

/** The body of a git request, inflated when git sent it gzipped. */
function bodyOf(request: IncomingMessage): Readable {
  return request.headers["content-encoding"] === "gzip" ? request.pipe(createGunzip()) : request;
}

/** Reads `stream` whole; undefined when it grows past `limit` bytes. */
async function readAll(stream: Readable, limit: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** The receive-pack ref advertisement of the staging mirror, with the hub's capabilities. */
async function receiveAdvertisement(dir: string): Promise<Buffer> {
  const refs = await gitText(["for-each-ref", "--format=%(objectname) %(refname)"], {
    cwd: dir,
    env: { GIT_DIR: dir },
  });
  const lines = refs.split("\n").filter(Boolean);
  if (lines.length === 0) lines.push(`${"0".repeat(40)} capabilities^{}`);
  const packets = lines.map((line, index) =>
    pktLine(index === 0 ? `${line}\0${CAPABILITIES}\n` : `${line}\n`),
  );
  return Buffer.concat([...packets, FLUSH]);
}

/** Answers a git HTTP request whole, uncached (git clients re-ask for refs each time). */
export function answer(response: ServerResponse, status: number, type: string, body: Buffer): void {
  response.writeHead(status, {
    "content-type": type,
    "content-length": String(body.length),
    "cache-control": "no-cache",
  });
  response.end(body);
}
