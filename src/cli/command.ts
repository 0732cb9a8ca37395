import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { parseArgs, type ParseArgsConfig } from "node:util";
import { AppError } from "../errors/app-error.js";
import type { Settings } from "../settings/index.js";

/** What a command may touch, passed in so tests can run commands in-process. */
export interface CommandIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  cwd: string;
  /** The settings, decoded once at start. */
  settings: Settings;
  /** The environment passed on to what the command starts (a workflow's named secrets). */
  env: NodeJS.ProcessEnv;
}

/** A subcommand: takes its arguments and returns the process exit code. */
export type Command = (args: string[], io: CommandIo) => Promise<number>;

/**
 * The exit codes, the same for every command (the README's table):
 * - `ok` 0: done; a run the command drove succeeded (for `cancel`: it is cancelled);
 * - `notOk` 1: a run ended failed, cancelled or escalated; `validate`/`graph` found errors;
 *   an unexpected error;
 * - `usage` 2: unknown command or option, missing argument, unreadable or invalid input file,
 *   unusable state directory;
 * - `awaiting` 3: the run waits on people (an approval, a lost node to resolve);
 * - `nothingToDo` 4: no such run, the run already ended or refused the answer, the state
 *   directory is held by another process, a workflow already exists (`init`).
 */
export const EXIT = { ok: 0, notOk: 1, usage: 2, awaiting: 3, nothingToDo: 4 } as const;

/** What a {@link CliError} says went wrong, which decides the exit code. */
export type CliErrorCode = "usage" | "nothingToDo";

/**
 * An error the CLI reports as one line, `clustercode <command>: <message>`, and exits with
 * `EXIT[code]`. Commands throw it at the edge instead of printing raw system errors.
 */
export class CliError extends AppError<CliErrorCode> {
  override readonly name: string = "CliError";

  constructor(code: CliErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(code, message, options);
  }
}

/**
 * A mistake in how a command was called, or input it cannot use; exits 2 with its message.
 * `pointToHelp` adds "see 'clustercode <command> --help'" (for unknown or missing options).
 */
export class UsageError extends CliError {
  override readonly name = "UsageError";
  /** Whether the command's `--help` answers this mistake. */
  readonly pointToHelp: boolean;

  constructor(message: string, options: { cause?: unknown; pointToHelp?: boolean } = {}) {
    super("usage", message, options);
    this.pointToHelp = options.pointToHelp ?? false;
  }
}

/** The command has nothing to do, or the run's state refuses it; exits 4 with its message. */
export class NothingToDoError extends CliError {
  override readonly name = "NothingToDoError";

  constructor(message: string, options: { cause?: unknown } = {}) {
    super("nothingToDo", message, options);
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
    throw new UsageError(parseArgsMessage(error), { cause: error, pointToHelp: true });
  }
}

/** parseArgs' messages, shortened: they are classified by their documented `code`. */
function parseArgsMessage(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  const option = /'(-[^' ]*)/.exec((error as Error).message)?.[1];
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" && option !== undefined)
    return `unknown option ${option}`;
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE" && option !== undefined)
    return `option ${option} needs a value`;
  return (error as Error).message;
}

/** What a failed file operation's `code` means, in words. */
export function describeFsError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  switch (code) {
    case "ENOENT":
      return "no such file or directory";
    case "EISDIR":
      return "it is a directory";
    case "ENOTDIR":
      return "a file is in the way of the path";
    case "EEXIST":
      return "it exists and is not a directory";
    case "EACCES":
    case "EPERM":
      return "permission denied";
    case "EROFS":
      return "read-only file system";
    default:
      return code ?? (error as Error).message;
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
    throw new UsageError(`cannot read ${file}: ${describeFsError(error)}`, { cause: error });
  }
}
