import type { RuntimeOptions } from "./runtime.js";

/**
 * `CLUSTERCODE_FAULT_AT=N` kills this process with SIGKILL at the Nth effect boundary (saved,
 * performed, receipted) of its runtime: the crash tests of the CLI and of the app use it to
 * prove that a run picked up again repeats no effect. `target` is the decoded setting.
 */
export function faultInjection(target: number | undefined): Pick<RuntimeOptions, "atBoundary"> {
  if (target === undefined || !Number.isInteger(target) || target <= 0) return {};
  let crossed = 0;
  return {
    atBoundary: () => {
      if (++crossed === target) process.kill(process.pid, "SIGKILL");
    },
  };
}
