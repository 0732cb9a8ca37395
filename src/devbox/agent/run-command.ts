import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type {
  CommandRequest,
  CommandResult,
  DevBoxCommand,
  TokenUsage,
} from "../../engine/commands.js";
import { MISSING_CREDENTIALS_EXIT, missingCredentials } from "./credentials.js";
import { readAgentSpend } from "./cost.js";
import { checkpoint, GitStepError, type GitContext } from "./git.js";
import { OutputTail } from "../output-tail.js";
import type { CommandSandbox } from "./command-sandbox.js";
import type { SecretMask } from "./secret-mask.js";
import { runProcess } from "../process-runner.js";
import { fileEnvName } from "../protocol.js";

/** How much combined output a result carries. */
export const OUTPUT_LIMIT_BYTES = 64 * 1024;
/** How much stdout is kept to find an agent's cost report in. */
const STDOUT_LIMIT_BYTES = 1024 * 1024;

/** Where and how commands run. */
export interface CommandContext {
  /** The checkout. */
  cwd: string;
  /** The DevBox's environment for commands (without the agent's token). */
  env: Record<string, string>;
  /** A private directory outside the checkout for prompt, message and input files. */
  tmpRoot: string;
  /** The run branch checkpoints push to. */
  branch: string;
  /** Aborting kills the running process group. */
  signal: AbortSignal;
  onSpawn?: (pid: number) => void;
  tee?: (text: string) => void;
  /** Authenticates checkpoint pushes (see {@link GitContext.credentials}). */
  credentials?: () => Promise<Record<string, string>>;
  /** Secrets masked in the output the result carries and in `tee`. */
  mask?: SecretMask;
  /** Wraps each script and agent CLI so it cannot act as the agent ({@link CommandSandbox}). */
  sandbox?: CommandSandbox;
}

/**
 * Runs one command in the checkout and reports how it ended. Every input that may hold
 * untrusted text (prompt, files, commit message) is written to a file in a fresh directory under
 * `tmpRoot`; only paths reach argv and the environment. Commands also see their own id as
 * `CLUSTERCODE_COMMAND_ID`, each file as `CLUSTERCODE_<NAME>_FILE`, and `CLUSTERCODE_SCRATCH`, a
 * directory of the DevBox outside the checkout whose files never reach the run branch.
 */
export async function executeCommand(
  request: CommandRequest,
  context: CommandContext,
): Promise<CommandResult> {
  const started = Date.now();
  const dir = await mkdtemp(join(context.tmpRoot, "command-"));
  // Notes a node keeps for later nodes: per DevBox, outside the checkout, never committed.
  const scratch = join(context.tmpRoot, "scratch");
  await mkdir(scratch, { recursive: true, mode: 0o700 });
  const env: Record<string, string> = {
    ...context.env,
    CLUSTERCODE_COMMAND_ID: request.commandId,
    CLUSTERCODE_SCRATCH: scratch,
  };
  for (const [name, content] of Object.entries(request.files ?? {})) {
    const path = join(dir, name);
    await writeFile(path, content, { mode: 0o600 });
    env[fileEnvName(name)] = path;
  }
  const output = new OutputTail(OUTPUT_LIMIT_BYTES);
  const outcome = await runKind(request.command, { ...context, env }, dir, output);
  // A node that declares outputs is given an empty `output` file: what it wrote goes back.
  const outputFile =
    request.files?.output === undefined
      ? undefined
      : (await readFile(join(dir, "output"), "utf8").catch(() => "")).slice(0, 65_537);
  return {
    commandId: request.commandId,
    exitCode: outcome.exitCode,
    // The process's output is masked as it arrives; this masks our own notes among it too.
    output: context.mask?.text(output.text()) ?? output.text(),
    durationMs: Date.now() - started,
    ...(outcome.refused === undefined ? {} : { refused: outcome.refused }),
    ...(outcome.costUsd === undefined ? {} : { costUsd: outcome.costUsd }),
    ...(outcome.usage === undefined ? {} : { usage: outcome.usage }),
    ...(outcome.sha === undefined ? {} : { sha: outcome.sha }),
    ...(outputFile === undefined ? {} : { outputFile }),
  };
}

interface KindOutcome {
  exitCode: number;
  refused?: string;
  costUsd?: number;
  usage?: TokenUsage;
  sha?: string;
}

async function runKind(
  command: DevBoxCommand,
  context: CommandContext,
  dir: string,
  output: OutputTail,
): Promise<KindOutcome> {
  const common = {
    cwd: context.cwd,
    env: context.env,
    signal: context.signal,
    output,
    ...(context.mask === undefined ? {} : { mask: context.mask }),
    ...(context.onSpawn === undefined ? {} : { onSpawn: context.onSpawn }),
    ...(context.tee === undefined ? {} : { tee: context.tee }),
  };
  const sandboxed = context.sandbox === undefined ? common : { ...common, wrap: context.sandbox };
  switch (command.type) {
    case "script":
      return runProcess({
        ...sandboxed,
        file: "bash",
        args: ["-eo", "pipefail", "-c", command.script],
      });
    case "agent": {
      const promptFile = join(dir, "agent-prompt.md");
      await writeFile(promptFile, command.prompt, { mode: 0o600 });
      const [file = "", ...args] = substitute(command.argv, promptFile, command.model, context.env);
      const refused = missingCredentials(file, command.credentials, context.env);
      if (refused !== undefined) {
        output.push(`clustercode: ${refused}\n`);
        return { exitCode: MISSING_CREDENTIALS_EXIT, refused };
      }
      const stdout = new OutputTail(STDOUT_LIMIT_BYTES);
      const { exitCode } = await runProcess({ ...sandboxed, file, args, stdout });
      const { missing, ...spend } = readAgentSpend(stdout.text(), command);
      for (const path of missing) {
        output.push(
          `\nclustercode: nothing usable at "${path}" in the last JSON the agent printed\n`,
        );
      }
      return { exitCode, ...spend };
    }
    case "checkpoint": {
      const messageFile = join(dir, "commit-message.txt");
      await writeFile(messageFile, command.message, { mode: 0o600 });
      const git: GitContext = {
        ...common,
        ...(context.credentials === undefined ? {} : { credentials: context.credentials }),
      };
      try {
        return { exitCode: 0, sha: await checkpoint(git, context.branch, messageFile) };
      } catch (error) {
        if (!(error instanceof GitStepError)) throw error;
        output.push(`clustercode: checkpoint failed: ${error.message}\n`);
        return { exitCode: error.exitCode };
      }
    }
  }
}

/**
 * The agent's argv with `{prompt_file}`, `{model}` and `{env:NAME}` (variable NAME of the
 * command's environment) replaced. Without a value (no model, NAME unset or empty), an argument
 * that holds the placeholder is left out, and so is the option before it unless the argument is
 * itself an option: `--model {model}` and `-c key={env:NAME}` go as pairs, `--model={model}`
 * alone, so the CLI falls back to its default.
 */
export function substitute(
  argv: readonly string[],
  promptFile: string,
  model?: string,
  env: Readonly<Record<string, string>> = {},
): string[] {
  const result: string[] = [];
  for (const arg of argv) {
    let missing = model === undefined && arg.includes("{model}");
    const value = arg.replaceAll(/\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => {
      const found = env[name] ?? "";
      if (found === "") missing = true;
      return found;
    });
    if (missing) {
      if (!arg.startsWith("-") && result.length > 1 && result.at(-1)?.startsWith("-") === true) {
        result.pop();
      }
      continue;
    }
    result.push(value.replaceAll("{prompt_file}", promptFile).replaceAll("{model}", model ?? ""));
  }
  return result;
}
