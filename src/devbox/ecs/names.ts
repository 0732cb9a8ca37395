import { createHash } from "node:crypto";
import { repositoryCloneUrl } from "../git-host.js";
import type { RepositoryRef } from "./task-definitions.js";

const TOKEN_LIMIT = 64;
const STARTED_BY_LIMIT = 128;

/**
 * RunTask's `clientToken` for placement attempt `attempt` of a DevBox: the DevBox id (which
 * encodes run, node and attempt) when it fits in 64 characters, else its SHA-256. Each placement
 * retry gets its own token, since ECS may answer a reused token with the earlier failure.
 */
export function clientTokenOf(devboxId: string, attempt = 0): string {
  const text = attempt === 0 ? devboxId : `${devboxId}.p${attempt}`;
  return text.length <= TOKEN_LIMIT && /^[\x21-\x7e]+$/.test(text) ? text : sha256(text);
}

/**
 * RunTask's `startedBy`: `clustercode/<DevBox id>` (the id begins with the run id), within the
 * 128 characters ECS allows; ListTasks finds a DevBox's task by it from any replica.
 */
export function startedByOf(devboxId: string): string {
  const text = `clustercode/${devboxId.replace(/[^A-Za-z0-9_-]/g, "_")}`;
  return text.length <= STARTED_BY_LIMIT ? text : `clustercode/${sha256(devboxId)}`;
}

/** A tag value within ECS's 256 characters and alphabet. */
export function tagValueOf(text: string): string {
  return text.replace(/[^\p{L}\p{Z}\p{N}_.:/=+\-@]/gu, "_").slice(0, 256);
}

/**
 * The GitHub repository a DevBox clones, from `owner/name`, `https://github.com/owner/name(.git)`,
 * `git@github.com:owner/name.git` or the hub's git route for it; undefined for anything else (a local path).
 */
export function githubRepositoryOf(repository: string): RepositoryRef | undefined {
  const match =
    /^([A-Za-z0-9-]+)\/([A-Za-z0-9._-]+)$/.exec(repository) ??
    // The hub's git route for the repository (see `DevBoxHub.gitUrl`).
    /^https?:\/\/[^/]+\/internal\/devboxes\/[^/]+\/git\/([A-Za-z0-9-]+)\/([A-Za-z0-9._-]+?)\.git$/.exec(
      repository,
    ) ??
    /^(?:https:\/\/github\.com\/|git@github\.com:)([A-Za-z0-9-]+)\/([A-Za-z0-9._-]+?)(?:\.git)?\/?$/.exec(
      repository,
    );
  if (match?.[1] === undefined || match[2] === undefined) return undefined;
  return { owner: match[1], name: match[2] };
}

/**
 * The URL a DevBox clones: `owner/name` becomes its URL on `gitHost` (github.com over https
 * unless the app talks to a GitHub Enterprise Server); anything else is kept.
 */
export function cloneUrlOf(repository: string, gitHost = new URL("https://github.com/")): string {
  return /^[A-Za-z0-9-]+\/[A-Za-z0-9._-]+$/.test(repository)
    ? repositoryCloneUrl(gitHost, repository)
    : repository;
}

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}
