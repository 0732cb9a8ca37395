import { callGitHub, isNotFound } from "./errors.js";
import type { GitHub, RepoRef } from "./github.js";

/** Whether someone may do something, and if not, why (for the reply). */
export type Permission = { ok: true } | { ok: false; why: string };

/** Does `user` have write access (write, maintain or admin) to the repository? */
export async function hasWriteAccess(gh: GitHub, repo: RepoRef, user: string): Promise<boolean> {
  const permission = await permissionOf(gh, repo, user);
  return permission === "admin" || permission === "write";
}

/** Does `user` have read access (or more) to the repository? The check behind run pages. */
export async function hasReadAccess(
  gh: GitHub,
  repo: Pick<RepoRef, "owner" | "repo">,
  user: string,
): Promise<boolean> {
  const permission = await permissionOf(gh, repo, user);
  return permission === "admin" || permission === "write" || permission === "read";
}

/** The user's permission on the repository (`none` when GitHub knows of none). */
async function permissionOf(
  gh: GitHub,
  repo: Pick<RepoRef, "owner" | "repo">,
  user: string,
): Promise<string> {
  try {
    const { data } = await callGitHub(`permission of ${user}`, () =>
      gh.request("GET /repos/{owner}/{repo}/collaborators/{username}/permission", {
        owner: repo.owner,
        repo: repo.repo,
        username: user,
      }),
    );
    return data.permission;
  } catch (error) {
    if (isNotFound(error)) return "none";
    throw error;
  }
}

/** May `user` write to the repository? The check behind `/cancel`, `/retry` and triggers. */
export async function mayWrite(gh: GitHub, repo: RepoRef, user: string): Promise<Permission> {
  if (await hasWriteAccess(gh, repo, user)) return { ok: true };
  return { ok: false, why: `@${user} needs write access to ${repo.owner}/${repo.repo} for this.` };
}

/**
 * May `user` answer an approval? With an approvers list (`@login`, `@org/team`): when listed or
 * an active member of a listed team. Without one: write access.
 */
export async function mayApprove(
  gh: GitHub,
  repo: RepoRef,
  user: string,
  approvers: readonly string[] | undefined,
): Promise<Permission> {
  if (approvers === undefined || approvers.length === 0) return mayWrite(gh, repo, user);
  for (const approver of approvers) {
    const name = approver.replace(/^@/, "");
    const [org, team] = name.split("/");
    if (team === undefined) {
      if (name.toLowerCase() === user.toLowerCase()) return { ok: true };
    } else if (org !== undefined && (await isTeamMember(gh, org, team, user))) {
      return { ok: true };
    }
  }
  return { ok: false, why: `@${user} is not among the approvers (${approvers.join(", ")}).` };
}

async function isTeamMember(gh: GitHub, org: string, team: string, user: string): Promise<boolean> {
  try {
    const { data } = await callGitHub(`membership of ${user} in ${org}/${team}`, () =>
      gh.request("GET /orgs/{org}/teams/{team_slug}/memberships/{username}", {
        org,
        team_slug: team,
        username: user,
      }),
    );
    return data.state === "active";
  } catch (error) {
    if (isNotFound(error)) return false;
    throw error;
  }
}
