/** A duration such as `30m`, `2h`, `1d` or `1h30m`: one or more number-unit pairs. */
export const DURATION_PATTERN = /^(?:[0-9]+[smhd])+$/;

const UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Milliseconds in a duration string already checked against {@link DURATION_PATTERN}. */
export function parseDuration(text: string): number {
  let total = 0;
  for (const [, amount, unit] of text.matchAll(/([0-9]+)([smhd])/g)) {
    total += Number(amount) * (UNIT_MS[unit ?? ""] ?? 0);
  }
  return total;
}

/** Mebibytes in a memory size such as `512MiB` or `8GiB`. */
export function parseMemoryMiB(text: string): number {
  const value = Number.parseInt(text, 10);
  return text.endsWith("GiB") ? value * 1024 : value;
}
