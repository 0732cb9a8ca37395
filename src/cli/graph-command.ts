import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { renderMermaid } from "../workflow/mermaid.js";
import { parseWorkflow } from "../workflow/parse.js";
import { parseOptions, UsageError, type Command } from "./command.js";
import { renderReports } from "./validate-command.js";

/** `clustercode graph FILE`: the workflow as a Mermaid flowchart. */
const graph: Command = async (args, io) => {
  const { positionals } = parseOptions(args, {});
  const [file, ...rest] = positionals;
  if (file === undefined || rest.length > 0) throw new UsageError("usage: clustercode graph FILE");
  let text: string;
  try {
    text = await readFile(resolve(io.cwd, file), "utf8");
  } catch (error) {
    io.stderr.write(
      `clustercode graph: cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}\n`,
    );
    return 2;
  }
  const result = parseWorkflow(text);
  if (!result.ok) {
    io.stderr.write(renderReports([{ file, valid: false, findings: result.findings }], "human"));
    return 1;
  }
  io.stdout.write(renderMermaid(result.workflow));
  return 0;
};
export default graph;
