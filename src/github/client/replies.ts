import { callGitHub } from "./errors.js";
import type { GitHub, RepoRef } from "./github.js";
import { truncateText } from "./limits.js";

/** Posts a comment on an issue or pull request (a reply to a person, or a notice). */
export async function reply(gh: GitHub, repo: RepoRef, issue: number, body: string): Promise<void> {
  await callGitHub(`comment on #${issue}`, () =>
    gh.request("POST /repos/{owner}/{repo}/issues/{issue_number}/comments", {
      owner: repo.owner,
      repo: repo.repo,
      issue_number: issue,
      body: truncateText(body),
    }),
  );
}
