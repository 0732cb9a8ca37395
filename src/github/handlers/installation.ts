import { callGitHub } from "../errors.js";
import type { HandlerContext } from "../services.js";
import { readWorkflows } from "../workflow-source.js";

/** The fields of `installation` and `installation_repositories` events the app reads. */
export interface InstallationPayload {
  action: string;
  installation: { id: number };
  repositories?: { full_name: string }[];
  repositories_added?: { full_name: string }[];
}

/** On install (or repositories added): remember the installation and register schedules. */
export async function onInstallation(
  payload: InstallationPayload,
  ctx: HandlerContext,
): Promise<void> {
  if (!["created", "new_permissions_accepted", "added"].includes(payload.action)) return;
  for (const { full_name } of payload.repositories ?? payload.repositories_added ?? []) {
    const [owner = "", repo = ""] = full_name.split("/");
    ctx.services.installations.remember(full_name, payload.installation.id);
    const { data } = await callGitHub(`read ${full_name}`, () =>
      ctx.gh.request("GET /repos/{owner}/{repo}", { owner, repo }),
    );
    const ref = { owner, repo, defaultBranch: data.default_branch };
    ctx.services.schedules.register(ref, await readWorkflows(ctx.gh, ref));
  }
}
