import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { parseArgs, type ParseArgsConfig } from "node:util";
import { AppError } from "../errors/app-error.js";

/** What a command may touch, passed in so tests can run commands in-process. */
export interface CommandIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/** A subcommand: takes its arguments and returns the process exit code. */
export type Command = (args: string[], io: CommandIo) => Promise<number>;

/** A mistake in how a command was called; exits 2 with its message. */
export class UsageError extends AppError<"usage"> {
  override readonly name = "UsageError";

  constructor(message: string, options: { cause?: unknown } = {}) {
    super("usage", message, options);
  }
}

/** `util.parseArgs` that reports bad options as a {@link UsageError}. */
export function parseOptions<const T extends NonNullable<ParseArgsConfig["options"]>>(
  args: string[],
  options: T,
) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** The `--format` option shared by commands: human by default. */
export function formatOption<F extends string>(value: unknown, allowed: readonly F[]): F {
  const format = value ?? allowed[0];
  if (!allowed.includes(format as F)) {
    throw new UsageError(`--format must be one of ${allowed.join(", ")}`);
  }
  return format as F;
}

/** The text of `file` (relative to the command's directory), or a usage error naming why not. */
export async function readInput(io: CommandIo, file: string): Promise<string> {
  try {
    return await readFile(resolve(io.cwd, file), "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new UsageError(`cannot read ${file}: ${code}`);
  }
}
