import type { RemovedText } from "../engine/model.js";

/** Issue text after cleaning, and what was taken out. */
export interface CleanedText {
  text: string;
  removed: RemovedText;
  /** Whether anything was removed: the evidence should say so. */
  changed: boolean;
}

const HTML_COMMENT = /<!--[\s\S]*?(?:-->|$)/g;
// U+200B–U+200D zero-width space/non-joiner/joiner, U+2060–U+2064 word joiner and invisible
// operators, U+FEFF BOM, U+00AD soft hyphen, U+180E Mongolian vowel separator, U+034F
// combining grapheme joiner, U+115F/U+1160/U+3164/U+FFA0 Hangul fillers, U+FE00–U+FE0F and
// U+E0100–U+E01EF variation selectors, U+180B–U+180D/U+180F Mongolian free variation
// selectors, U+17B4/U+17B5 Khmer inherent vowels, U+1D173–U+1D17A musical formatting
// controls, U+FFF9–U+FFFB interlinear annotation marks.
// Marks that combine with what precedes them stand alone, not in a character class.
const ZERO_WIDTH =
  /[\u200B-\u200D\u2060-\u2064\uFEFF\u00AD\u180E\u115F\u1160\u3164\uFFA0\uFFF9-\uFFFB]|\u034F|[\uFE00-\uFE0F]|[\u{E0100}-\u{E01EF}]|[\u180B-\u180D]|\u180F|[\u17B4\u17B5]|[\u{1D173}-\u{1D17A}]/gu;
// U+202A–U+202E embeddings and overrides, U+2066–U+2069 isolates, U+200E/U+200F marks, U+061C ALM.
const BIDI = /[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/g;
const TAGS = /[\u{E0000}-\u{E007F}]/gu;
// A link reference definition to `#` or `<>` is the Markdown comment idiom: the whole line,
// label and title, is invisible once rendered. A title may sit on the next line or span
// lines, never across a blank one.
const TITLE_LINE = String.raw`(?:[^\n]|\n(?![ \t]*\n))`;
const TITLE = String.raw`"(?:(?!")${TITLE_LINE})*"|'(?:(?!')${TITLE_LINE})*'|\((?:(?![()])${TITLE_LINE})*\)`;
const MARKDOWN_COMMENT = new RegExp(
  String.raw`^ {0,3}\[[^\]\n]*\]:[ \t]*(?:#|<>)(?:[ \t]*(?:\n[ \t]*)?(?:${TITLE}))?[ \t]*(?:\n|$)`,
  "gm",
);

/**
 * Removes the usual carriers of hidden prompt injections from issue text before an agent or a
 * judge reads it: HTML and Markdown comments (invisible on GitHub, visible to a model), zero-width
 * characters, bidirectional controls and Unicode tag characters. Visible text is untouched.
 * Apply it to the brief before a run starts and record `removed` in the run's evidence.
 */
export function cleanIssueText(text: string): CleanedText {
  const removed: RemovedText = { htmlComments: 0, zeroWidth: 0, bidiControls: 0, tagCharacters: 0 };
  // Invisible characters first, so they cannot split "<!--" and hide a comment from the pattern.
  let cleaned = text.replace(TAGS, () => {
    removed.tagCharacters++;
    return "";
  });
  cleaned = cleaned.replace(ZERO_WIDTH, () => {
    removed.zeroWidth++;
    return "";
  });
  cleaned = cleaned.replace(BIDI, () => {
    removed.bidiControls++;
    return "";
  });
  cleaned = cleaned.replace(HTML_COMMENT, () => {
    removed.htmlComments++;
    return "";
  });
  cleaned = cleaned.replace(MARKDOWN_COMMENT, () => {
    removed.htmlComments++;
    return "";
  });
  const changed = Object.values(removed).some((count) => count > 0);
  return { text: cleaned, removed, changed };
}
