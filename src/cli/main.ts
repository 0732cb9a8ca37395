#!/usr/bin/env node
/**
 * The `clustercode` command. Each subcommand is imported only when it runs, so `validate` and
 * `graph` start without loading Probot or the AWS SDK.
 */
import { readFileSync } from "node:fs";
import {
  inheritedEnvironment,
  quietAwsSdkNotice,
  settingsAtStart,
} from "../settings/process-environment.js";
import { closeMatch } from "../workflow/edit-distance.js";
import { COMMANDS } from "./command-table.js";
import { CliError, EXIT, UsageError } from "./command.js";

const VERSION = (
  JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
    version: string;
  }
).version;

const HELP = `Usage: clustercode <command> [options]

Commands:
${Object.values(COMMANDS)
  .map((entry) => `  ${entry.synopsis.padEnd(30)} ${entry.summary}`)
  .join("\n")}

Run 'clustercode <command> --help' for a command's options; 'clustercode --version' for the
version.

Exit codes: 0 ok; 1 run failed, cancelled or escalated (validate: errors); 2 usage error;
3 run waits on people; 4 nothing to do (no such run, run already ended, answer refused).
`;

// The AWS SDK warns on every start that it will want Node 22 from 2027; our engines field says so.
quietAwsSdkNotice();
// A reader that went away (`clustercode log RUN | head`) is not an error.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(0);
  throw error;
});

/** `--help` or `-h` anywhere before a `--`, as gh and git read it. */
function asksForHelp(args: string[]): boolean {
  const end = args.indexOf("--");
  return (end < 0 ? args : args.slice(0, end)).some((arg) => arg === "--help" || arg === "-h");
}

async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  if (name === "--version" || name === "-v" || name === "version") {
    process.stdout.write(`clustercode ${VERSION}\n`);
    return EXIT.ok;
  }
  if (name === undefined || name === "help" || name === "--help" || name === "-h") {
    const entry = name === "help" && args[0] !== undefined ? COMMANDS[args[0]] : undefined;
    process.stdout.write(entry === undefined ? HELP : `${entry.help}\n`);
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  const entry = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (entry === undefined) {
    const close = closeMatch(name, Object.keys(COMMANDS));
    const hint = close === undefined ? "." : `: did you mean "${close}"?`;
    process.stderr.write(
      `clustercode: unknown command "${name}"${hint} See 'clustercode --help'.\n`,
    );
    return EXIT.usage;
  }
  if (asksForHelp(args)) {
    process.stdout.write(`${entry.help}\n`);
    return EXIT.ok;
  }
  // Decoded once, before the command does anything: a bad value stops it, naming the variable.
  const settings = settingsAtStart(`clustercode ${name}`, EXIT.usage);
  const command = await entry.load();
  try {
    return await command(args, {
      stdout: process.stdout,
      stderr: process.stderr,
      cwd: process.cwd(),
      settings,
      env: inheritedEnvironment(),
    });
  } catch (error) {
    return report(name, error, settings.diagnostics.debug === true);
  }
}

/** One line on stderr for what stopped a command, and its exit code; stacks only on request. */
function report(name: string, error: unknown, debug: boolean): number {
  const line = (message: string) => process.stderr.write(`clustercode ${name}: ${message}\n`);
  if (error instanceof CliError) {
    const help = error instanceof UsageError && error.pointToHelp;
    line(help ? `${error.message} (see 'clustercode ${name} --help')` : error.message);
    return EXIT[error.code];
  }
  const message = error instanceof Error ? error.message : String(error);
  line(`${message.split("\n")[0]} (CLUSTERCODE_DEBUG=1 shows the stack)`);
  if (debug) process.stderr.write(`${String((error as Error).stack)}\n`);
  return EXIT.notOk;
}

const code = await main(process.argv.slice(2));
// Exit once output is flushed: a DevBox or socket still open must not keep a finished command alive.
await new Promise<void>((resolve) => process.stdout.write("", () => resolve()));
await new Promise<void>((resolve) => process.stderr.write("", () => resolve()));
process.exit(code);
