import type { IncomingMessage, ServerResponse } from "node:http";
import { RunRepository, type LoadedRun, type RunReads } from "../../store/run-repository.js";
import type { Answers } from "../handlers/answers.js";
import { GitHubAppError, isNotFound } from "../client/errors.js";
import { splitFullName } from "../client/github.js";
import type { Installations } from "../client/installations.js";
import { hasReadAccess } from "../client/permissions.js";
import type { RunLinks } from "../../ui/build-run-view.js";
import { SIGN_OUT_PATH, type GitHubSignIn } from "../../ui/github-sign-in.js";
import type { RunPagesConfig } from "../../ui/run-pages-config.js";
import type { Access, AnswerResult, PageAnswer, RunPagesHost } from "../../ui/run-pages-host.js";

/**
 * The app's run pages: viewing needs a GitHub sign-in and read access to the repository
 * (checked with the installation's client), answers go through {@link Answers.applyApproval}
 * (the approvers, teams and write access, as `/approve`), and links point at GitHub.
 */
export class AppRunPages implements RunPagesHost {
  readonly repoSegments = 2;
  readonly signOutPath = SIGN_OUT_PATH;

  constructor(
    private readonly deps: {
      config: RunPagesConfig;
      store: RunReads;
      signIn: GitHubSignIn;
      installations: Pick<Installations, "client">;
      answers: Pick<Answers, "applyApproval">;
    },
  ) {}

  async access(req: IncomingMessage, repo: string | undefined, returnTo: string): Promise<Access> {
    const viewer = await this.deps.signIn.viewer(req);
    if (viewer === undefined) {
      return {
        ok: false,
        status: 401,
        message: "Sign in with GitHub to see ClusterCode runs.",
        signIn: this.deps.signIn.signInPath(returnTo),
      };
    }
    const name = repo ?? "";
    const readable = await this.#mayRead(name, viewer.login);
    if (readable === "unavailable") {
      return { ok: false, status: 503, message: "GitHub did not answer; try again in a moment." };
    }
    if (!readable) {
      return {
        ok: false,
        status: 403,
        message: `@${viewer.login} needs read access to ${name}, with the ClusterCode app installed there, to see its runs.`,
      };
    }
    return { ok: true, viewer };
  }

  listRuns(repo: string | undefined): Promise<LoadedRun[]> {
    return new RunRepository(this.deps.store).list(repo ?? "", { limit: 100 });
  }

  links(run: LoadedRun): RunLinks {
    const { state } = run.document;
    const base = `https://${this.deps.config.githubHost}/${run.stored.repo}`;
    const branch = state.branch.split("/").map(encodeURIComponent).join("/");
    return {
      ...(state.branchPushed
        ? {
            branch: `${base}/tree/${branch}`,
            pullRequest: `${base}/pulls?q=${encodeURIComponent(`is:pr head:${state.branch}`)}`,
          }
        : {}),
      ...(state.lastSha === undefined ? {} : { commit: `${base}/commit/${state.lastSha}` }),
    };
  }

  async answer(request: PageAnswer): Promise<AnswerResult> {
    const { stored, document } = request.run;
    const gh = await this.deps.installations.client(stored.repo);
    const { definition } = document;
    const outcome = await this.deps.answers.applyApproval(
      {
        gh,
        repo: { ...splitFullName(stored.repo), defaultBranch: definition.baseBranch },
        actor: request.viewer.login,
        where: `${this.deps.config.publicUrl}${request.pagePath}`,
      },
      stored.runId,
      request.decision,
      request.note,
      request.visit,
    );
    if (outcome.applied) {
      const word = request.decision === "approved" ? "Approved" : "Rejected";
      return { ok: true, status: 200, message: `${word} by @${request.viewer.login}.` };
    }
    return { ok: false, status: 403, message: outcome.why ?? "This run cannot be answered here." };
  }

  routes(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    return this.deps.signIn.routes(req, res);
  }

  async #mayRead(repo: string, login: string): Promise<boolean | "unavailable"> {
    const { owner, repo: name } = splitFullName(repo);
    if (owner === "" || name === "") return false;
    try {
      return await hasReadAccess(
        await this.deps.installations.client(repo),
        { owner, repo: name },
        login,
      );
    } catch (error) {
      // Not installed there: nothing of it is shown. Any other failure is GitHub's, said so.
      if (isNotFound(error)) return false;
      if (error instanceof GitHubAppError) return "unavailable";
      throw error;
    }
  }
}
