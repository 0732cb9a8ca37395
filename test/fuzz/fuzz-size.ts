/**
 * How many cases each fuzz property tries: CI-sized by default, the full size with
 * `CLUSTERCODE_SOAK=1` (`CLUSTERCODE_SOAK=1 npx vitest run test/fuzz`).
 */
export function runs(ci: number, full: number): number {
  return process.env.CLUSTERCODE_SOAK === "1" ? full : ci;
}
