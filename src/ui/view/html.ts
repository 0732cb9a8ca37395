/**
 * HTML escaping for the run pages. Every piece of text that reaches a page (issue text, command
 * output, reasoning, node names) passes through {@link esc}; markup is only ever built from
 * constants and escaped text.
 */

const ENTITIES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** `text` with `& < > " '` replaced by entities: safe in element content and quoted attributes. */
export function esc(text: string | number | undefined): string {
  return String(text ?? "").replace(/[&<>"']/g, (char) => ENTITIES[char] ?? char);
}

/** A UTC time as `YYYY-MM-DD HH:MM:SS UTC`. */
export function utc(at: number): string {
  return `${new Date(at).toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

/** Dollars with two decimals (four below a cent, so small agent turns are not shown as 0). */
export function usd(value: number): string {
  return `$${value !== 0 && Math.abs(value) < 0.01 ? value.toFixed(4) : value.toFixed(2)}`;
}

/** A duration in ms as `1.2 s` or `3 min 4 s`. */
export function duration(ms: number): string {
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}
