/**
 * Text from a command, an agent or a run's evidence made safe to print: every control character
 * but newline and tab is shown in caret notation (`ESC` as `^[`, a C1 control as `^[` and its
 * letter, DEL as `^?`), as `gh` does, and a CRLF line end becomes a newline. So output cannot
 * move the cursor, overprint a line the CLI wrote (a fake "● run succeeded"), set the clipboard
 * (OSC 52) or hide a link (OSC 8), on a terminal or in a log file someone later `cat`s. The
 * CLI's own colouring, if any, is added after this.
 */
export function terminalText(text: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what this finds
  return text.replace(/\r\n/g, "\n").replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, caret);
}

function caret(control: string): string {
  const code = control.charCodeAt(0);
  if (code === 0x7f) return "^?";
  // A C1 control is ESC followed by its letter (0x9b is `ESC [`, the CSI).
  if (code >= 0x80) return `^[${String.fromCharCode(code - 0x40)}`;
  return `^${String.fromCharCode(code + 0x40)}`;
}

/**
 * `value` as JSON safe to print: JSON escapes C0 controls itself; DEL and the C1 controls (a
 * terminal may take U+009B for a CSI) are escaped too, so the line parses to the same value.
 */
export function terminalJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[\u007f-\u009f]/g,
    (control) => `\\u${control.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
