import type { z } from "zod";
import type { Kind } from "./kinds.js";

/** The process that reads a setting: the GitHub App, the `clustercode` CLI, the DevBox agent. */
export type Reader = "app" | "cli" | "agent";

/** What the documentation says of a setting besides its kind. */
export interface SettingDoc {
  description: string;
  readers: readonly Reader[];
  /** The default in words, when it is not a constant (say, a path computed at start). */
  default?: string;
  /** A credential: free text, so that its value never appears in an error. */
  secret?: boolean;
}

/** One environment variable: its name, how its text decodes, and its documentation. */
export interface Setting<T extends z.ZodType = z.ZodType> extends SettingDoc {
  name: string;
  schema: T;
  expects: string;
}

/** A concern's settings, documented together. */
export interface SettingGroup {
  title: string;
  about: string;
  settings: Record<string, Setting>;
}

/** A setting that is undefined when unset (or set to the empty string). */
export function optional<T extends z.ZodType>(
  name: string,
  kind: Kind<T>,
  doc: SettingDoc,
): Setting<z.ZodOptional<T>> {
  return { name, schema: kind.schema.optional(), expects: kind.expects, ...doc };
}

/** A setting with a constant default when unset (or set to the empty string). */
export function withDefault<T extends z.ZodType>(
  name: string,
  kind: Kind<T>,
  value: z.util.NoUndefined<z.output<T>>,
  doc: SettingDoc,
): Setting<z.ZodDefault<T>> {
  return { name, schema: kind.schema.default(value), expects: kind.expects, ...doc };
}
