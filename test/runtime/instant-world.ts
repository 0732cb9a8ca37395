import type { Effect, RunEvent } from "../../src/engine/model.js";
import type { EffectPerformer } from "../../src/runtime/effects.js";
import { Runtime } from "../../src/runtime/runtime.js";
import type { Store } from "../../src/store/store.js";

/**
 * A world that answers DevBox effects at once, through the runtime, as a replica's DevBoxes
 * would, recording what it did. `crashAt` throws (a crash) when performing that many effects.
 */
export class InstantWorld implements EffectPerformer {
  runtime!: Runtime;
  performed: Effect[] = [];
  crashAt = Infinity;

  perform(runId: string, effect: Effect): Promise<unknown> {
    if (this.performed.length + 1 >= this.crashAt) return Promise.reject(new Error("crash"));
    this.performed.push(effect);
    const at = Date.now();
    const later = (event: RunEvent) =>
      queueMicrotask(() => void this.runtime.deliver(runId, event).catch(() => {}));
    if (effect.type === "devbox.claim")
      later({ type: "devbox.ready", devboxId: effect.devboxId, ok: true, at });
    if (effect.type === "command.dispatch") {
      const result = {
        commandId: effect.request.commandId,
        exitCode: 0,
        output: "",
        durationMs: 1,
      };
      later({ type: "command.finished", devboxId: effect.devboxId, result, at });
    }
    return Promise.resolve({ done: effect.seq });
  }
}

/** A runtime over `store` whose effects `world` answers. */
export function openRuntime(store: Store, world = new InstantWorld()): Runtime {
  const runtime = new Runtime({ store, performer: world, now: Date.now });
  world.runtime = runtime;
  return runtime;
}
