import { renderMermaid } from "../workflow/mermaid.js";
import { parseOptions, UsageError, type Command } from "./command.js";
import { renderReports } from "./validate-command.js";
import { chooseWorkflow } from "./workflow-choice.js";

/**
 * `clustercode graph [FILE|NAME]`: the workflow as a Mermaid flowchart; without an argument the
 * repository's workflow, found as `run` finds it.
 */
const graph: Command = async (args, io) => {
  const { positionals } = parseOptions(args, {});
  if (positionals.length > 1) throw new UsageError("usage: clustercode graph [FILE|NAME]");
  const { file, text, parsed } = await chooseWorkflow(io, positionals[0]);
  if (!parsed.ok) {
    const report = { file, valid: false, findings: parsed.findings, text };
    io.stderr.write(renderReports([report], "human"));
    return 1;
  }
  io.stdout.write(renderMermaid(parsed.workflow));
  return 0;
};
export default graph;
