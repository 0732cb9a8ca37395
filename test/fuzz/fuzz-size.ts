/**
 * How many cases each fuzz property tries: CI-sized by default, the full size with
 * `CLUSTERCODE_SOAK=1` (`CLUSTERCODE_SOAK=1 npx vitest run test/fuzz`).
 */
export function runs(ci: number, full: number): number {
  return process.env.CLUSTERCODE_SOAK === "1" ? full : ci;
}

/** A fuzz test's time limit: the default's 20 s in CI, ten minutes at the full size. */
export const SOAK_TIMEOUT = runs(20_000, 600_000);
