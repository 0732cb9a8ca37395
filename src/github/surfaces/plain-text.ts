import { cleanIssueText } from "../../agents/clean-text.js";

/**
 * People's words (an approval's note, a cancel reason) as text in a comment or check-run
 * summary: without what GitHub would hide — an HTML comment copied verbatim would hide it again,
 * or pass for one of the app's markers — and with no HTML of its own.
 */
export function plainText(value: string): string {
  return cleanIssueText(value)
    .text.replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;");
}
