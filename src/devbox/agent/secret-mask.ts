/** What a secret's value is replaced with in output. */
const MASKED = "***";

/**
 * Replaces secret values in output, as CI systems mask secrets in logs: each value, its trimmed
 * form and each line of a multi-line value is replaced with `***`. Values shorter than four
 * characters are left alone: masking them would garble the output without hiding anything
 * worth hiding.
 */
export class SecretMask {
  /** The mask of a process with no secrets: text passes unchanged. */
  static readonly none = new SecretMask([]);

  /** Every form to mask, the longest first, so a secret containing another is masked whole. */
  readonly #secrets: readonly string[];
  readonly #pattern: RegExp | undefined;
  /** The characters a secret starts with (a held-back tail can only start at one of these). */
  readonly #starts: ReadonlySet<string>;

  constructor(values: readonly (string | undefined)[]) {
    const forms = values.flatMap((value) =>
      value === undefined
        ? []
        : [value, value.trim(), ...value.split(/\r?\n/).map((line) => line.trim())],
    );
    this.#secrets = [...new Set(forms)]
      .filter((form) => form.length >= 4)
      .sort((a, b) => b.length - a.length);
    this.#pattern =
      this.#secrets.length === 0
        ? undefined
        : new RegExp(this.#secrets.map(escapeRegExp).join("|"), "g");
    this.#starts = new Set(this.#secrets.map((secret) => secret.slice(0, 1)));
  }

  /** The length of the longest secret (0 without secrets). */
  get longest(): number {
    return this.#secrets[0]?.length ?? 0;
  }

  /** `text` with every secret in it masked. */
  text(text: string): string {
    return this.#pattern === undefined ? text : text.replace(this.#pattern, MASKED);
  }

  /** A masker for one stream of text that arrives in chunks (see {@link StreamMasker}). */
  stream(): StreamMasker {
    return new StreamMasker(this);
  }

  /**
   * Masks the complete secrets in `text` and says where the part that may still become a secret
   * begins: the first place in the last `longest - 1` characters where the rest of the text is
   * the start of a longer secret. A match that starts there is held back too, since a longer
   * secret may still complete.
   */
  maskUpToTail(text: string): { shown: string; held: number } {
    const pattern = this.#pattern;
    if (pattern === undefined) return { shown: text, held: text.length };
    let shown = "";
    let at = 0;
    let held = this.#tailStart(text, at);
    for (;;) {
      pattern.lastIndex = at;
      const match = pattern.exec(text);
      if (match === null || match.index >= held) break;
      shown += text.slice(at, match.index) + MASKED;
      at = match.index + match[0].length;
      if (at > held) held = this.#tailStart(text, at);
    }
    return { shown: shown + text.slice(at, held), held };
  }

  /** The first index ≥ `from` where `text` ends in the unfinished start of a secret. */
  #tailStart(text: string, from: number): number {
    for (let start = Math.max(from, text.length - this.longest + 1); start < text.length; start++) {
      if (!this.#starts.has(text.charAt(start))) continue;
      const rest = text.slice(start);
      if (this.#secrets.some((secret) => secret.length > rest.length && secret.startsWith(rest))) {
        return start;
      }
    }
    return text.length;
  }
}

/**
 * Masks one stream of text arriving in chunks of any size: `write` returns what can be shown
 * now and holds back a tail that may be the start of a secret (never more than the longest
 * secret), so a secret split between chunks is still masked; `flush` returns the rest once the
 * stream ends.
 */
export class StreamMasker {
  readonly #mask: SecretMask;
  #held = "";

  constructor(mask: SecretMask) {
    this.#mask = mask;
  }

  /** Takes the next chunk; returns the masked text that can be shown now. */
  write(chunk: string): string {
    const text = this.#held + chunk;
    const { shown, held } = this.#mask.maskUpToTail(text);
    this.#held = text.slice(held);
    return shown;
  }

  /** Returns the held-back tail, masked, and starts afresh. */
  flush(): string {
    const rest = this.#mask.text(this.#held);
    this.#held = "";
    return rest;
  }
}

function escapeRegExp(text: string): string {
  return text.replaceAll(/[\\^$.*+?()[\]{}|/-]/g, "\\$&");
}
