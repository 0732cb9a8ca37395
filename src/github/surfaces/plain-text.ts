import { cleanIssueText } from "../../agents/clean-text.js";

/**
 * People's and CI's words (an approval's note, a cancel reason, a reviewer's or a check run's
 * text and name) as text in a comment or check-run summary: without what GitHub would hide — an
 * HTML comment copied verbatim would hide it again, or pass for one of the app's markers — with
 * no HTML of its own, and no Markdown that acts: `[`, `]` and `!` are escaped (no link, no image
 * beacon fetched by every reader) and an `@` is followed by a zero-width space (no mention of a
 * person or `@org/team`).
 */
export function plainText(value: string): string {
  return cleanIssueText(value)
    .text.replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/[\\[\]!]/g, "\\$&")
    .replace(/@/g, "@&#8203;");
}

/** Such words inside a code span (a file name): cleaned, and unable to close the span. */
export function codeText(value: string): string {
  return cleanIssueText(value)
    .text.replace(/`/g, "'")
    .replace(/[\r\n]+/g, " ");
}
