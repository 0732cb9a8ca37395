/** What a secret's value is replaced with in output. */
const MASKED = "***";

/** Longest line kept back while waiting for its end (a longer one is masked as it is). */
const MAX_HELD_LINE = 64 * 1024;

/**
 * Replaces secret values in text. With `cut`, the text is the tail of longer output that may
 * begin inside a secret: its first characters, where such a partial secret could be, are dropped.
 */
export type Mask = (text: string, options?: { cut?: boolean }) => string;

/**
 * A mask for the given secret values, as CI systems mask secrets in logs: each value, its
 * trimmed form and each line of a multi-line value is replaced with `***`. Values shorter than
 * four characters are left alone: masking them would garble the output without hiding anything
 * worth hiding.
 */
export function secretMask(values: readonly (string | undefined)[]): Mask {
  const forms = values.flatMap((value) =>
    value === undefined ? [] : [value, value.trim(), ...value.split(/\r?\n/).map((l) => l.trim())],
  );
  const secrets = [...new Set(forms)]
    .filter((form) => form.length >= 4)
    // The longest first, so a secret containing another is masked whole.
    .sort((a, b) => b.length - a.length);
  const longest = secrets[0]?.length ?? 0;
  return (text, options) => {
    if (longest === 0) return text;
    const whole = options?.cut === true ? text.slice(longest - 1) : text;
    return secrets.reduce((masked, secret) => masked.replaceAll(secret, MASKED), whole);
  };
}

/**
 * Masks a stream of output chunks a line at a time, so a secret split between two chunks is
 * still masked: `write` returns what can be shown now, `flush` the rest once the stream ends.
 */
export function lineMasker(mask: Mask): { write(chunk: string): string; flush(): string } {
  let held = "";
  return {
    write(chunk) {
      const text = held + chunk;
      const end = text.lastIndexOf("\n") + 1;
      held = text.slice(end);
      let shown = mask(text.slice(0, end));
      if (held.length > MAX_HELD_LINE) {
        shown += mask(held);
        held = "";
      }
      return shown;
    },
    flush() {
      const rest = mask(held);
      held = "";
      return rest;
    },
  };
}
