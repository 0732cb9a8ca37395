import { callGitHub, isNotFound } from "../client/errors.js";
import { splitFullName, type GitHub, type RepoRef } from "../client/github.js";
import type { Installations } from "../client/installations.js";
import { hasWriteAccess } from "../client/permissions.js";
import { readWorkflows } from "../client/workflow-source.js";
import { LAYOUT_FILE, positionsOf, withPositions } from "../../editor/layout-file.js";
import { emptyWorkflow } from "../../editor/workflow-draft.js";
import type {
  OpenedWorkflow,
  SaveRequest,
  SaveResult,
  WorkflowFiles,
} from "../../editor/workflow-files.js";

/** A file read from a branch: its text and blob SHA. */
interface Blob {
  text: string;
  sha: string;
}

/**
 * The workflows of a repository the app is installed on. The editor opens them from the default
 * branch (the blob SHA is the version); saving opens a pull request through the installation on
 * behalf of the signed-in user, who needs write access: a branch, a commit with the user as
 * co-author, and the pull request, which the validation check then checks.
 */
export class AppWorkflowFiles implements WorkflowFiles {
  readonly saves = "pull-request";

  constructor(private readonly installations: Pick<Installations, "client">) {}

  async list(repo: string | undefined): Promise<string[]> {
    const { gh, ref } = await this.#repo(repo);
    return (await readWorkflows(gh, ref)).map((file) => file.path);
  }

  async open(repo: string | undefined, path: string): Promise<OpenedWorkflow> {
    const { gh, ref } = await this.#repo(repo);
    const file = await readBlob(gh, ref, path, ref.defaultBranch);
    const layout = await readBlob(gh, ref, LAYOUT_FILE, ref.defaultBranch);
    const name = path.replace(/^.*\//, "").replace(/\.ya?ml$/, "");
    return {
      path,
      yaml: file?.text ?? emptyWorkflow(name === "workflow" ? "main" : name),
      version: file?.sha ?? "absent",
      exists: file !== undefined,
      positions: positionsOf(layout?.text, path),
    };
  }

  async save(request: SaveRequest): Promise<SaveResult> {
    const { gh, ref } = await this.#repo(request.repo);
    const login = request.viewer.login;
    if (!(await hasWriteAccess(gh, ref, login)))
      return {
        ok: false,
        status: 403,
        message: `@${login} needs write access to ${request.repo ?? ""} to propose a change.`,
      };
    const current = await readBlob(gh, ref, request.path, ref.defaultBranch);
    if ((current?.sha ?? "absent") !== request.version)
      return {
        ok: false,
        status: 409,
        message: `${request.path} changed on ${ref.defaultBranch} since the editor opened it: reload to see the change.`,
      };
    const branch = await createBranch(gh, ref, request.path);
    const trailer = `\n\nCo-authored-by: ${await coAuthor(gh, login)}`;
    const message = `${current === undefined ? "Add" : "Edit"} ${request.path} in the ClusterCode editor${trailer}`;
    const written = await writeFile(gh, ref, {
      branch,
      path: request.path,
      text: request.yaml,
      message,
      sha: current?.sha,
    });
    const layout = await readBlob(gh, ref, LAYOUT_FILE, branch);
    const positions = withPositions(layout?.text, request.path, request.positions);
    if (positions !== layout?.text)
      await writeFile(gh, ref, {
        branch,
        path: LAYOUT_FILE,
        text: positions,
        message: `Lay out ${request.path}${trailer}`,
        sha: layout?.sha,
      });
    const { data } = await callGitHub("open the editor's pull request", () =>
      gh.request("POST /repos/{owner}/{repo}/pulls", {
        owner: ref.owner,
        repo: ref.repo,
        head: branch,
        base: ref.defaultBranch,
        title: `${current === undefined ? "Add" : "Edit"} ${request.path}`,
        body: `Proposed by @${login} in the ClusterCode editor. The workflow validation check shows the graph's change.`,
      }),
    );
    return {
      ok: true,
      version: written,
      message: `Opened pull request #${data.number}.`,
      pullRequest: data.html_url,
    };
  }

  async #repo(name: string | undefined): Promise<{ gh: GitHub; ref: RepoRef }> {
    const gh = await this.installations.client(name ?? "");
    const { owner, repo } = splitFullName(name ?? "");
    const { data } = await callGitHub(`read ${owner}/${repo}`, () =>
      gh.request("GET /repos/{owner}/{repo}", { owner, repo }),
    );
    return { gh, ref: { owner, repo, defaultBranch: data.default_branch } };
  }
}

async function readBlob(
  gh: GitHub,
  repo: RepoRef,
  path: string,
  ref: string,
): Promise<Blob | undefined> {
  try {
    const { data } = await callGitHub(`read ${path}@${ref}`, () =>
      gh.request("GET /repos/{owner}/{repo}/contents/{path}", {
        owner: repo.owner,
        repo: repo.repo,
        path,
        ref,
      }),
    );
    if (Array.isArray(data) || data.type !== "file" || !("content" in data)) return undefined;
    return { text: Buffer.from(data.content, "base64").toString("utf8"), sha: data.sha };
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

/** A new branch at the default branch's head, named after the file and the moment. */
async function createBranch(gh: GitHub, repo: RepoRef, path: string): Promise<string> {
  const { data: head } = await callGitHub("read the default branch", () =>
    gh.request("GET /repos/{owner}/{repo}/git/ref/{ref}", {
      owner: repo.owner,
      repo: repo.repo,
      ref: `heads/${repo.defaultBranch}`,
    }),
  );
  const slug = path.replace(/^.*\//, "").replace(/\.ya?ml$/, "");
  const branch = `clustercode/edit/${slug}-${Date.now().toString(36)}`;
  await callGitHub(`create ${branch}`, () =>
    gh.request("POST /repos/{owner}/{repo}/git/refs", {
      owner: repo.owner,
      repo: repo.repo,
      ref: `refs/heads/${branch}`,
      sha: head.object.sha,
    }),
  );
  return branch;
}

/** Commits `text` to `path` on `branch`; returns the new blob SHA. */
async function writeFile(
  gh: GitHub,
  repo: RepoRef,
  file: { branch: string; path: string; text: string; message: string; sha: string | undefined },
): Promise<string> {
  const { data } = await callGitHub(`write ${file.path}`, () =>
    gh.request("PUT /repos/{owner}/{repo}/contents/{path}", {
      owner: repo.owner,
      repo: repo.repo,
      path: file.path,
      branch: file.branch,
      message: file.message,
      content: Buffer.from(file.text, "utf8").toString("base64"),
      ...(file.sha === undefined ? {} : { sha: file.sha }),
    }),
  );
  return data.content?.sha ?? "";
}

/** The `Co-authored-by:` identity GitHub credits a user by: their no-reply address. */
async function coAuthor(gh: GitHub, login: string): Promise<string> {
  const { data } = await callGitHub(`read @${login}`, () =>
    gh.request("GET /users/{username}", { username: login }),
  );
  return `${data.login} <${data.id}+${data.login}@users.noreply.github.com>`;
}
