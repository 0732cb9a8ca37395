import { callGitHub } from "../client/errors.js";
import type { GitHub, GitHubAuth } from "../client/github.js";
import type { AppServices, HandlerContext } from "./services.js";
import { readWorkflows } from "../client/workflow-source.js";
import { adoptDefaultBranchWorkflows } from "./default-branch.js";

/** The fields of `installation` and `installation_repositories` events the app reads. */
export interface InstallationPayload {
  action: string;
  installation: { id: number };
  repositories?: { full_name: string }[];
  repositories_added?: { full_name: string }[];
}

/** Does it install the app or add repositories to an installation? */
export function installs(payload: InstallationPayload): boolean {
  return ["created", "new_permissions_accepted", "added"].includes(payload.action);
}

/** On install (or repositories added): remember the installation and register schedules. */
export async function onInstallation(
  payload: InstallationPayload,
  ctx: HandlerContext,
): Promise<void> {
  if (!installs(payload)) return;
  for (const { full_name } of payload.repositories ?? payload.repositories_added ?? []) {
    await registerRepository(ctx.gh, ctx.services, payload.installation.id, full_name);
  }
}

/**
 * Remembers a repository's installation and takes up its default branch's workflows (their
 * schedules and the warm DevBoxes they ask for).
 */
async function registerRepository(
  gh: GitHub,
  services: Pick<AppServices, "installations" | "schedules" | "warmDemand">,
  installationId: number,
  fullName: string,
): Promise<void> {
  const [owner = "", repo = ""] = fullName.split("/");
  services.installations.remember(fullName, installationId);
  const { data } = await callGitHub(`read ${fullName}`, () =>
    gh.request("GET /repos/{owner}/{repo}", { owner, repo }),
  );
  const ref = { owner, repo, defaultBranch: data.default_branch };
  await adoptDefaultBranchWorkflows(services, ref, await readWorkflows(gh, ref));
}

/**
 * On start: registers the schedules (and declares the warm DevBoxes) of every repository of
 * every installation again from its default branch, in case a push was missed while no process ran. A repository that cannot be
 * read is reported and skipped. Returns how many were read.
 */
export async function registerInstalledSchedules(
  auth: GitHubAuth,
  services: Pick<AppServices, "installations" | "schedules" | "warmDemand">,
  onError: (error: unknown) => void,
): Promise<number> {
  const app = await auth.app();
  const installations = await callGitHub("list installations", () =>
    app.paginate("GET /app/installations", { per_page: 100 }),
  );
  let read = 0;
  for (const installation of installations) {
    const gh = await auth.installation(installation.id);
    const repositories = await callGitHub(
      `list repositories of installation ${installation.id}`,
      () => gh.paginate("GET /installation/repositories", { per_page: 100 }),
    );
    for (const { full_name } of repositories) {
      await registerRepository(gh, services, installation.id, full_name).then(
        () => read++,
        onError,
      );
    }
  }
  return read;
}
