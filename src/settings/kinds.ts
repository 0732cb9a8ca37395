import { z } from "zod";

/**
 * What a setting's text must look like: its zod schema (from the variable's text, never empty,
 * to the typed value) and the words the documentation and the errors use for it.
 */
export interface Kind<T extends z.ZodType = z.ZodType> {
  schema: T;
  /** "a whole number of milliseconds": completes "must be …". */
  expects: string;
}

const WHOLE = /^\d+$/;

/** Free text (names, hosts, paths, keys). */
export function text(): Kind<z.ZodString> {
  return { schema: z.string(), expects: "text" };
}

/** A whole number from `min` to `max`. */
export function whole(min: number, max: number, unit = "") {
  const expects = `a whole number${unit} from ${min} to ${max}`;
  return {
    schema: z.string().regex(WHOLE).transform(Number).pipe(z.number().min(min).max(max)),
    expects,
  };
}

/** A positive whole number (an id, a count). */
export function positiveWhole() {
  return {
    schema: z.string().regex(WHOLE).transform(Number).pipe(z.number().int().positive()),
    expects: "a positive whole number",
  };
}

/** A positive whole number of milliseconds. */
export function milliseconds() {
  return { ...positiveWhole(), expects: "a positive whole number of milliseconds" };
}

/** A whole number of milliseconds, 0 included. */
export function gapMilliseconds() {
  return {
    schema: z.string().regex(WHOLE).transform(Number),
    expects: "a whole number of milliseconds (0 or more)",
  };
}

/** One of a few words. */
export function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  return {
    schema: z.enum(values),
    expects: `one of ${values.map((value) => `\`${value}\``).join(", ")}`,
  };
}

/** An http(s) URL. */
export function httpUrl() {
  return {
    schema: z.string().refine((value) => /^https?:\/\/[^/]/.test(value) && URL.canParse(value)),
    expects: "an http(s) URL",
  };
}

/** Comma-separated items, blanks dropped. */
export function commaList() {
  return {
    schema: z.string().transform((value) =>
      value
        .split(",")
        .map((item) => item.trim())
        .filter((item) => item !== ""),
    ),
    expects: "a comma-separated list",
  };
}

/** A JSON array of strings. */
export function jsonStrings() {
  return {
    schema: z.string().transform((value, ctx) => {
      try {
        const parsed: unknown = JSON.parse(value);
        if (Array.isArray(parsed) && parsed.every((item) => typeof item === "string"))
          return parsed;
      } catch (error) {
        if (!(error instanceof SyntaxError)) throw error;
      }
      ctx.addIssue({ code: "custom", message: "not a JSON array of strings" });
      return z.NEVER;
    }),
    expects: "a JSON array of strings",
  };
}

/** `1` turns it on; anything else is a mistake worth saying. */
export function flag() {
  return { schema: z.literal("1").transform(() => true), expects: "`1`" };
}

/** Any non-empty value turns it on (the historic reading of debug switches). */
export function anyValue() {
  return { schema: z.string().transform(() => true), expects: "any value" };
}
