/** GitHub's limit on a check run's summary and text, and on a comment body, in bytes. */
export const MAX_TEXT_BYTES = 65_535;
/** GitHub accepts at most this many annotations per check-run request. */
export const MAX_ANNOTATIONS_PER_REQUEST = 50;

const NOTICE = "\n\n… (truncated to fit GitHub's limit)";

/**
 * Cuts `text` to at most `maxBytes` UTF-8 bytes (default GitHub's 65,535), ending with a notice
 * when it cut; never splits a character.
 */
export function truncateText(text: string, maxBytes = MAX_TEXT_BYTES): string {
  if (Buffer.byteLength(text, "utf8") <= maxBytes) return text;
  const budget = maxBytes - Buffer.byteLength(NOTICE, "utf8");
  let bytes = 0;
  let end = 0;
  for (const char of text) {
    const size = Buffer.byteLength(char, "utf8");
    if (bytes + size > budget) break;
    bytes += size;
    end += char.length;
  }
  return text.slice(0, end) + NOTICE;
}

/** Splits `items` into consecutive batches of at most `size`. */
export function batches<T>(items: readonly T[], size = MAX_ANNOTATIONS_PER_REQUEST): T[][] {
  const out: T[][] = [];
  for (let index = 0; index < items.length; index += size)
    out.push(items.slice(index, index + size));
  return out;
}

/**
 * A reason's first line, cut to `maxChars` (the rest, such as a failed setup's output, stays in
 * the evidence log).
 */
export function firstLine(text: string, maxChars = 200): string {
  const [line = ""] = text.split(/\r?\n/, 1);
  return line.length > maxChars ? `${line.slice(0, maxChars - 1)}…` : line;
}

/** Escapes text for a Markdown table cell on one line. */
export function cell(text: string): string {
  return text.replace(/\|/g, "\\|").replace(/\r?\n/g, " ");
}
