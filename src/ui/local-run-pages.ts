import { createHmac, randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { RunEvent, RunSnapshot } from "../engine/model.js";
import type { Delivery } from "../runtime/runtime.js";
import type { LoadedRun, RunRepository } from "../store/run-repository.js";
import type { Access, AnswerResult, PageAnswer, RunPagesHost } from "./run-pages-host.js";

/** How `clustercode ui` serves local runs. */
export interface LocalRunPagesOptions {
  /** The state directory's runs, as `clustercode ui`'s LocalHost holds them. */
  host: {
    runs: Pick<RunRepository, "list" | "listActive">;
    /** Picks a run up in this process (LocalHost.resume). */
    resume(runId: string): Promise<RunSnapshot | undefined>;
    /** Offers the run an event (the host's runtime). */
    deliver(runId: string, event: RunEvent): Promise<Delivery>;
  };
  /** The person answering (as `clustercode approve --as` defaults to `$USER`). */
  actor: string;
  /** The local repository whose finished runs the index lists besides every active run. */
  repo?: string;
  /** The port the server listens on: requests naming another host are refused (DNS rebinding). */
  port: () => number;
  now?: () => number;
}

/**
 * The run pages of `clustercode ui`: no sign-in (the server listens on 127.0.0.1 only, and
 * refuses requests whose Host is not it), a per-process CSRF token, and answers applied as
 * `clustercode approve` applies them, by picking the run up in this process, which then drives
 * it on while the page watches.
 */
export class LocalRunPages implements RunPagesHost {
  readonly repoSegments = 0;
  readonly #csrf = createHmac("sha256", randomBytes(32)).update("local run pages").digest("hex");

  constructor(private readonly options: LocalRunPagesOptions) {}

  access(req: IncomingMessage): Promise<Access> {
    const port = this.options.port();
    const allowed = [`127.0.0.1:${port}`, `localhost:${port}`];
    if (!allowed.includes(req.headers.host ?? "")) {
      return Promise.resolve({
        ok: false,
        status: 403,
        message: `Open the pages at http://127.0.0.1:${port}/runs.`,
      });
    }
    return Promise.resolve({ ok: true, viewer: { login: this.options.actor, csrf: this.#csrf } });
  }

  async listRuns(): Promise<LoadedRun[]> {
    const { runs } = this.options.host;
    const active = await runs.listActive();
    const ofRepo =
      this.options.repo === undefined ? [] : await runs.list(this.options.repo, { limit: 100 });
    const byId = new Map([...ofRepo, ...active].map((run) => [run.stored.runId, run]));
    return [...byId.values()].sort((a, b) => b.stored.createdAt - a.stored.createdAt);
  }

  links(): Record<string, never> {
    return {};
  }

  async answer(request: PageAnswer): Promise<AnswerResult> {
    const { host } = this.options;
    const runId = request.run.stored.runId;
    const { state } = request.run.document;
    if (state.awaiting?.kind !== "approval") {
      return {
        ok: false,
        status: 409,
        message: `Run ${runId} is not waiting for an approval (it is ${state.status}).`,
      };
    }
    if (state.active?.visit !== request.visit) {
      return {
        ok: false,
        status: 409,
        message: `That page showed an earlier approval of run ${runId}; reload it.`,
      };
    }
    await host.resume(runId);
    const event: RunEvent = {
      type: "approval.answer",
      decision: request.decision,
      actor: request.viewer.login,
      node: state.awaiting.node,
      where: "run page",
      at: (this.options.now ?? Date.now)(),
      ...(request.note === undefined ? {} : { note: request.note }),
    };
    const delivery = await host.deliver(runId, event);
    if (!delivery.applied)
      return { ok: false, status: 409, message: `Not applied: ${delivery.refused.message}.` };
    return {
      ok: true,
      status: 200,
      message: `${request.decision === "approved" ? "Approved" : "Rejected"} by ${request.viewer.login}.`,
    };
  }
}
