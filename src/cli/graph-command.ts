import { renderMermaid } from "../workflow/mermaid.js";
import { parseWorkflow } from "../workflow/parse.js";
import { parseOptions, readInput, UsageError, type Command } from "./command.js";
import { renderReports } from "./validate-command.js";

/** `clustercode graph FILE`: the workflow as a Mermaid flowchart. */
const graph: Command = async (args, io) => {
  const { positionals } = parseOptions(args, {});
  const [file, ...rest] = positionals;
  if (file === undefined || rest.length > 0) throw new UsageError("usage: clustercode graph FILE");
  const text = await readInput(io, file);
  const result = parseWorkflow(text);
  if (!result.ok) {
    io.stderr.write(renderReports([{ file, valid: false, findings: result.findings }], "human"));
    return 1;
  }
  io.stdout.write(renderMermaid(result.workflow));
  return 0;
};
export default graph;
