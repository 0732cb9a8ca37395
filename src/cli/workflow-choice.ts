import { existsSync } from "node:fs";
import { join, resolve, sep } from "node:path";
import { parseWorkflow, type ParseResult } from "../workflow/parse.js";
import { readInput, UsageError, type CommandIo } from "./command.js";
import { discoverWorkflows } from "../workflow/find-workflows.js";

/** A workflow file of the repository, read and parsed. */
export interface WorkflowFile {
  /** As given, or relative to the current directory. */
  file: string;
  text: string;
  parsed: ParseResult;
}

const NONE_FOUND =
  "no workflow found: pass a file, or run inside a repository with .clustercode/workflow.yml (clustercode init writes one)";

/** The repository's workflow files (see {@link discoverWorkflows}), read and parsed. */
export async function readWorkflows(io: CommandIo): Promise<WorkflowFile[]> {
  const files = await discoverWorkflows(io.cwd);
  return Promise.all(
    files.map(async (file) => {
      const text = await readInput(io, file);
      return { file, text, parsed: parseWorkflow(text) };
    }),
  );
}

/**
 * The workflow `run` takes: `FILE` when it names a file (or looks like one: a `.yml` name or a
 * path), else the repository's workflow with
 * that `name`; without an argument `.clustercode/workflow.yml`, or the repository's only
 * workflow. Anything else is a usage error that lists the workflows to choose from.
 */
export async function chooseWorkflow(
  io: CommandIo,
  argument: string | undefined,
): Promise<WorkflowFile> {
  if (
    argument !== undefined &&
    (looksLikeFile(argument) || existsSync(resolve(io.cwd, argument)))
  ) {
    const text = await readInput(io, argument);
    return { file: argument, text, parsed: parseWorkflow(text) };
  }
  const found = await readWorkflows(io);
  if (found.length === 0) {
    throw new UsageError(
      argument === undefined ? NONE_FOUND : `no such file or workflow: ${argument}`,
    );
  }
  if (argument !== undefined) {
    const named = found.find((one) => nameOf(one) === argument);
    if (named !== undefined) return named;
    throw new UsageError(`no workflow named ${argument} (nor such a file)\n${listing(found)}`);
  }
  const main = found.find((one) => one.file.endsWith(join(".clustercode", "workflow.yml")));
  const only = found.length === 1 ? found[0] : undefined;
  const chosen = main ?? only;
  if (chosen !== undefined) return chosen;
  throw new UsageError(
    `this repository has ${found.length} workflows and no .clustercode/workflow.yml: name one (clustercode run NAME)\n${listing(found)}`,
  );
}

/** A YAML file name or a path is read as a file (its error says why it cannot be), not a name. */
function looksLikeFile(argument: string): boolean {
  return /\.ya?ml$/i.test(argument) || argument.includes("/") || argument.includes(sep);
}

/** A workflow's name, or undefined when its file does not validate. */
export function nameOf(file: WorkflowFile): string | undefined {
  return file.parsed.ok ? file.parsed.workflow.name : undefined;
}

/** The workflows as lines: name and file (or that the file does not validate). */
export function listing(files: WorkflowFile[]): string {
  const width = Math.max(...files.map((one) => (nameOf(one) ?? "").length), 4);
  return files
    .map((one) => `  ${(nameOf(one) ?? "(invalid)").padEnd(width)}  ${one.file}`)
    .join("\n");
}
