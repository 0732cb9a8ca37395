/** What a secret's value is replaced with in output. */
export const MASKED = "***";

/**
 * A function that replaces every occurrence of the given secret values with `***`, as CI
 * systems mask secrets in logs. Values shorter than four characters are left alone: masking
 * them would garble the output without hiding anything worth hiding.
 */
export function secretMask(values: readonly (string | undefined)[]): (text: string) => string {
  const secrets = [...new Set(values)]
    .filter((value): value is string => value !== undefined && value.trim().length >= 4)
    // The longest first, so a secret containing another is masked whole.
    .sort((a, b) => b.length - a.length);
  if (secrets.length === 0) return (text) => text;
  return (text) => secrets.reduce((masked, secret) => masked.replaceAll(secret, MASKED), text);
}
