import type { Effect } from "../../engine/model.js";
import { globalDevBoxId } from "../devbox-registry.js";
import type { PerformContext, Performed, Performer } from "./performer.js";

type Claim = Extract<Effect, { type: "devbox.claim" }>;

/** Starts a claimed DevBox once; a DevBox that cannot start fails its node with the reason. */
export const claimDevBox: Performer<"devbox.claim"> = async (context, effect) => {
  const { runId, hub, registry, leases, events } = context;
  const id = globalDevBoxId(runId, effect.devboxId);
  if (registry.has(id)) return { receipt: { started: "already" } };
  // Another replica started it (its outbox performed twice): one claim, one DevBox.
  if (leases !== undefined && !(await leases.take(id)))
    return { receipt: { started: "elsewhere" } };
  const { token } = hub.register({
    devboxId: id,
    runId,
    secretValues: secretValues(context, effect),
    ...(effect.spend === undefined ? {} : { spend: effect.spend }),
  });
  hub.allowEgress(id, effect.spec.networkAllow);
  registry.claimed(id, events);
  try {
    await startDevBox(context, effect, id, token);
  } catch (error) {
    registry.forget(id);
    hub.release(id);
    await leases?.release(id);
    const reason = error instanceof Error ? error.message : String(error);
    const at = context.now();
    return {
      receipt: { failed: reason },
      follow: [{ type: "devbox.ready", devboxId: effect.devboxId, ok: false, error: reason, at }],
    };
  }
  return { receipt: { started: id } };
};

/** The values of the run's secrets: the hub refuses a push that carries one. */
function secretValues(context: PerformContext, effect: Claim): string[] {
  return effect.spec.secrets.flatMap((name) => {
    const value = context.source.env[name];
    return value === undefined || value === "" ? [] : [value];
  });
}

/** Asks the executor to start DevBox `id` with its secrets, proxy and repository. */
async function startDevBox(
  context: PerformContext,
  effect: Claim,
  id: string,
  token: string,
): Promise<void> {
  const { runId, hub, executor, runs, source } = context;
  const repo = await runs.repoOf(runId);
  // Git goes through the hub, which holds the repository's credentials.
  const repository = hub.servesGit ? hub.gitUrl(id, repo ?? "") : await source.repositoryOf(runId);
  // The setup cache's scopes are the runtime's to say, never the DevBox's.
  const { branch, baseBranch } = effect.spec;
  hub.scopeSetupCache(id, { repository, branch, baseBranch });
  // Provider keys the hub holds stay with it: the DevBox gets placeholders and its proxy.
  const providerEnv = hub.providerEnv(id, effect.spec.secrets);
  const names = effect.spec.secrets.filter((name) => providerEnv[name] === undefined);
  const secrets = Object.fromEntries(
    names.flatMap((name) => {
      const value = source.env[name];
      return value === undefined ? [] : [[name, value]];
    }),
  );
  await executor.start({
    devboxId: id,
    runId,
    apiUrl: hub.url,
    token,
    spec: { ...effect.spec, secrets: names },
    repository,
    // Warm DevBoxes are kept per repository (see `devbox.warm`).
    ...(repo === undefined ? {} : { repo }),
    env: secrets,
    providerEnv,
    egressProxy: hub.egressProxyUrl(id),
  });
}

/** Stops a DevBox and gives up its lease. */
export const releaseDevBox: Performer<"devbox.release"> = async (context, effect) => {
  const { runId, registry, hub, executor, leases } = context;
  const id = globalDevBoxId(runId, effect.devboxId);
  registry.forget(id);
  hub.release(id);
  await executor.stop(id);
  await leases?.release(id);
  return { receipt: { stopped: id } };
};

/** Hands a command to its DevBox; one of a process that died is lost. */
export const dispatchCommand: Performer<"command.dispatch"> = (context, effect) => {
  const { runId, registry, hub } = context;
  const id = globalDevBoxId(runId, effect.devboxId);
  let performed: Performed;
  if (registry.has(id)) {
    hub.dispatch(id, effect.request);
    performed = { receipt: { dispatched: effect.request.commandId } };
  } else {
    // The DevBox belonged to a process that died: its outcome is unknown.
    const reason = "the DevBox's runtime process stopped";
    const at = context.now();
    performed = {
      receipt: { lost: id },
      follow: [{ type: "devbox.lost", devboxId: effect.devboxId, reason, at }],
    };
  }
  return Promise.resolve(performed);
};

/** Stops the command running in a DevBox; the DevBox stays. */
export const interruptCommand: Performer<"command.interrupt"> = (context, effect) => {
  context.hub.interrupt(globalDevBoxId(context.runId, effect.devboxId), effect.commandId);
  return Promise.resolve({ receipt: { interrupted: effect.commandId } });
};
