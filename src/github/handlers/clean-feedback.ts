import { cleanIssueText } from "../../agents/clean-text.js";
import type { UntimedFeedback } from "./review-feedback.js";

/**
 * People's and CI's words (a review, its line comments, a check run's name, title, summary,
 * annotations and log, an approval's note) as a run is told them: cleaned like an issue brief,
 * without HTML and Markdown comments, zero-width, bidirectional and tag characters, so what
 * GitHub hides from a person cannot speak to the agent in its feedback file or prompt, nor
 * reach a status comment, check run or run page.
 */
export function cleanFeedback(item: UntimedFeedback): UntimedFeedback {
  return {
    ...item,
    summary: cleanIssueText(item.summary).text,
    ...(item.detail === undefined ? {} : { detail: cleanIssueText(item.detail).text }),
    ...(item.label === undefined ? {} : { label: cleanIssueText(item.label).text }),
  };
}

/** A note (an approval's, a review's body) cleaned as {@link cleanFeedback} cleans feedback. */
export function cleanNote(note: string | undefined): string | undefined {
  return note === undefined ? undefined : cleanIssueText(note).text;
}
