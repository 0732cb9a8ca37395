import { missingEngineCommands, type ReportedFinding } from "./engine-commands-check.js";
import { parseWorkflow } from "../workflow/parse.js";
import { formatOption, parseOptions, readInput, UsageError, type Command } from "./command.js";
import { discoverWorkflows } from "../workflow/find-workflows.js";
import { codeFrame } from "./code-frame.js";

/** The result of validating one file. */
export interface FileReport {
  file: string;
  valid: boolean;
  findings: ReportedFinding[];
  /** The file's text: the human format shows each finding's line under it. Never in JSON. */
  text?: string;
}

const FORMATS = ["human", "json", "github"] as const;

/** `clustercode validate [FILE...] [--format human|json|github] [--strict]`. */
const validate: Command = async (args, io) => {
  const { values, positionals } = parseOptions(args, {
    format: { type: "string" },
    strict: { type: "boolean" },
  });
  const format = formatOption(values.format, FORMATS);
  const files = positionals.length > 0 ? positionals : await discoverWorkflows(io.cwd);
  if (files.length === 0) {
    throw new UsageError(
      "no workflow found: pass a file, or run inside a repository with .clustercode/workflow.yml (clustercode init writes one)",
    );
  }
  const reports: FileReport[] = [];
  for (const file of files) {
    const text = await readInput(io, file);
    const result = parseWorkflow(text);
    // --strict: what a local run of it needs on this host, as its DevBoxes will look for it.
    const host =
      values.strict === true && result.ok
        ? missingEngineCommands(text, result.workflow, io.env.PATH ?? "")
        : [];
    const findings = [...result.findings, ...host];
    reports.push({ file, valid: result.ok && host.length === 0, findings, text });
  }
  io.stdout.write(renderReports(reports, format));
  if (format === "human") io.stderr.write(summarize(reports));
  return reports.every((report) => report.valid) ? 0 : 1;
};
export default validate;

/** Findings in one of the output formats. */
export function renderReports(reports: FileReport[], format: (typeof FORMATS)[number]): string {
  if (format === "json") {
    const files = reports.map(({ file, valid, findings }) => ({ file, valid, findings }));
    return JSON.stringify({ files }) + "\n";
  }
  const lines = reports.flatMap((report) =>
    report.findings.map((finding) =>
      format === "github"
        ? `::${finding.severity} file=${property(report.file)},line=${finding.line},col=${finding.column},title=${property(finding.rule)}::${data(finding.message)}`
        : human(report, finding),
    ),
  );
  return lines.length === 0 ? "" : lines.join("\n") + "\n";
}

/** `FILE:LINE:COL  SEVERITY  MESSAGE  [RULE]`, then the source around it with a caret. */
function human(report: FileReport, finding: ReportedFinding): string {
  const head = `${report.file}:${finding.line}:${finding.column}  ${finding.severity}  ${finding.message}  [${finding.rule}]`;
  const frame =
    report.text === undefined ? "" : codeFrame(report.text, finding.line, finding.column);
  // The frame ends in a newline: a blank line then parts one finding from the next.
  return frame === "" ? head : `${head}\n${frame}`;
}

function summarize(reports: FileReport[]): string {
  const all = reports.flatMap((report) => report.findings);
  const errors = all.filter((finding) => finding.severity === "error").length;
  const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? "" : "s"}`;
  return `${plural(reports.length, "file")} checked: ${plural(errors, "error")}, ${plural(all.length - errors, "warning")}\n`;
}

// Escaping of GitHub Actions workflow commands.
function data(text: string): string {
  return text.replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
}
function property(text: string): string {
  return data(text).replace(/:/g, "%3A").replace(/,/g, "%2C");
}
