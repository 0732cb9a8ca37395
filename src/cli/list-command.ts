import type { Workflow } from "../workflow/workflow.schema.js";
import { formatOption, parseOptions, UsageError, type Command } from "./command.js";
import { readWorkflows, type WorkflowFile } from "./workflow-choice.js";

/**
 * `clustercode list [--format human|json]`: the repository's workflows (found as `validate`
 * finds them), each with its file, what starts it and its nodes, entry first.
 */
const list: Command = async (args, io) => {
  const { values, positionals } = parseOptions(args, { format: { type: "string" } });
  if (positionals.length > 0)
    throw new UsageError("list takes no arguments", { pointToHelp: true });
  const format = formatOption(values.format, ["human", "json"] as const);
  const files = await readWorkflows(io);
  if (files.length === 0) {
    throw new UsageError(
      "no workflow found: run inside a repository with .clustercode/workflow.yml (clustercode init writes one)",
    );
  }
  const rows = files.map(rowOf);
  if (format === "json") {
    io.stdout.write(`${JSON.stringify({ workflows: rows })}\n`);
    return 0;
  }
  const cells = [["NAME", "FILE", "TRIGGERS", "NODES"], ...rows.map(cellsOf)];
  const widths = [0, 1, 2].map((column) =>
    Math.max(...cells.map((line) => line[column]?.length ?? 0)),
  );
  for (const line of cells) {
    io.stdout.write(
      `${line
        .map((cell, column) => cell.padEnd(widths[column] ?? 0))
        .join("  ")
        .trimEnd()}\n`,
    );
  }
  return 0;
};
export default list;

interface Row {
  name: string | null;
  file: string;
  valid: boolean;
  triggers: string[];
  nodes: string[];
}

function rowOf(file: WorkflowFile): Row {
  if (!file.parsed.ok)
    return { name: null, file: file.file, valid: false, triggers: [], nodes: [] };
  const workflow = file.parsed.workflow;
  return {
    name: workflow.name,
    file: file.file,
    valid: true,
    triggers: triggersOf(workflow),
    nodes: Object.keys(workflow.nodes),
  };
}

function cellsOf(row: Row): string[] {
  if (!row.valid) return ["(invalid)", row.file, "-", "clustercode validate shows why"];
  return [row.name ?? "", row.file, row.triggers.join(", ") || "-", row.nodes.join(" ")];
}

/** What starts a workflow, in words: `label ready`, `command`, `schedule 0 6 * * 1`. */
function triggersOf(workflow: Workflow): string[] {
  const { label, command, schedule } = workflow.on;
  const labels = label === undefined ? [] : Array.isArray(label) ? label : [label];
  return [
    ...labels.map((one) => `label ${one}`),
    ...(command ? ["command"] : []),
    ...(schedule ?? []).map((one) => `schedule ${one.cron}`),
  ];
}
