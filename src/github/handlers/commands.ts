/** A command a person typed at the start of a comment line. */
export type CommentCommand =
  | { kind: "run"; workflow?: string }
  | { kind: "status" }
  | { kind: "approve"; note?: string }
  | { kind: "reject"; note?: string }
  | { kind: "cancel"; note?: string }
  | { kind: "retry"; resetBudget?: true }
  | { kind: "resolve"; outcome: "succeeded" | "failed"; note?: string }
  | { kind: "rework"; note: string }
  | { kind: "invalid"; message: string };

// The word ends at whitespace or the end of the line: `\b` would also end it at `?`, `-`, `.`
// or `@`, so `/approve? is this ready` approved. The words are ASCII, so a lookalike
// (`/аpprove` with a Cyrillic а) is no command, as any unknown word is not.
const LINE = /^\/(clustercode|approve|reject|cancel|retry|resolve|rework)(?:\s+(.*))?$/;

/**
 * The first command in a comment body, read from the first line that starts with `/`
 * followed by a known word and then whitespace or the line's end; undefined when the comment
 * holds none, so a near miss (`/approve?`, `/reject-ish`) gets no reply, as an unknown word.
 * Quoted lines (`> /approve`) and code blocks do not count.
 */
export function parseCommand(body: string): CommentCommand | undefined {
  let fenced = false;
  for (const raw of body.split(/\r?\n/)) {
    const line = raw.trim();
    if (line.startsWith("```")) fenced = !fenced;
    if (fenced) continue;
    const match = LINE.exec(line);
    if (match !== null) return commandOf(match[1] ?? "", (match[2] ?? "").trim());
    const imitated = lookalikeOf(line);
    if (imitated !== undefined) {
      return {
        kind: "invalid",
        message: `\`${line.split(/\s/)[0] ?? ""}\` is not \`/${imitated}\`: it is spelled with lookalike or hidden characters, so it does nothing. Type the command in plain ASCII.`,
      };
    }
  }
  return undefined;
}

/** Letters of other scripts that look like the Latin letters of the command words. */
const CONFUSABLES: Readonly<Record<string, string>> = {
  а: "a",
  е: "e",
  о: "o",
  р: "p",
  с: "c",
  у: "y",
  х: "x",
  і: "i",
  ј: "j",
  ѕ: "s",
  ԁ: "d",
  ɑ: "a",
  ο: "o",
  ρ: "p",
  ν: "v",
  τ: "t",
  ι: "i",
  κ: "k",
  υ: "u",
  ℓ: "l",
  ı: "i",
};
const WORDS = /^(clustercode|approve|reject|cancel|retry|resolve|rework)$/;

/**
 * The command word a line's first word imitates with lookalike letters (Cyrillic `а`, fullwidth
 * `ａ`) or hidden characters inside it; undefined when it imitates none or is the word itself.
 */
function lookalikeOf(line: string): string | undefined {
  const word = /^[/／](\S+)/u.exec(line)?.[1];
  if (word === undefined || /^[\x21-\x7e]+$/.test(word)) return undefined;
  const folded = [...word.normalize("NFKC").replace(/\p{Default_Ignorable_Code_Point}/gu, "")]
    .map((char) => CONFUSABLES[char] ?? char)
    .join("")
    .toLowerCase();
  return WORDS.test(folded) ? folded : undefined;
}

function commandOf(word: string, rest: string): CommentCommand {
  const note = rest === "" ? {} : { note: rest };
  switch (word) {
    case "approve":
      return { kind: "approve", ...note };
    case "reject":
      return { kind: "reject", ...note };
    case "cancel":
      return { kind: "cancel", ...note };
    case "retry": {
      // Words after /retry are a note to people; only a flag changes what it does.
      const flags = rest.split(/\s+/).filter((part) => part.startsWith("--"));
      if (flags.some((flag) => flag !== "--reset-budget")) {
        return { kind: "invalid", message: "usage: `/retry [--reset-budget]`" };
      }
      return flags.length > 0 ? { kind: "retry", resetBudget: true } : { kind: "retry" };
    }
    case "rework":
      // What to change is the point: a bare `/rework` would send the run back with nothing to do.
      return rest === ""
        ? {
            kind: "invalid",
            message:
              "usage: `/rework <what to change>` sends a run that succeeded back to work with that text as feedback",
          }
        : { kind: "rework", note: rest };
    case "resolve": {
      const [outcome, ...more] = rest.split(/\s+/);
      if (outcome !== "succeeded" && outcome !== "failed") {
        return { kind: "invalid", message: "usage: `/resolve succeeded|failed [note]`" };
      }
      const text = more.join(" ");
      return { kind: "resolve", outcome, ...(text === "" ? {} : { note: text }) };
    }
    default: {
      const [sub, name, ...extra] = rest.split(/\s+/).filter((part) => part !== "");
      if (sub === "status" && name === undefined) return { kind: "status" };
      if (sub === "run" && extra.length === 0) {
        return name === undefined ? { kind: "run" } : { kind: "run", workflow: name };
      }
      return {
        kind: "invalid",
        message: "usage: `/clustercode run [workflow]` or `/clustercode status`",
      };
    }
  }
}
