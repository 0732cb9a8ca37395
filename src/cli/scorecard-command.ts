import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { readVerdicts } from "../scorecard/read-verdicts.js";
import { formatShare, scorecard, type ScorecardRow } from "../scorecard/scorecard.js";
import { DURATION_PATTERN, parseDuration } from "../workflow/duration.js";
import { openStore } from "../store/embedded.js";
import { formatOption, parseOptions, UsageError, type Command } from "./command.js";
import { findGitRoot } from "../workflow/find-workflows.js";
import { usableStateDir } from "./run-output.js";
import { RunRepository } from "../store/run-repository.js";

/** `--since`: a date (2026-11-01, or any ISO time) or a duration back from now (7d, 12h). */
export function sinceOf(text: string | undefined, now: number, option = "--since"): number {
  if (text === undefined) return 0;
  if (DURATION_PATTERN.test(text)) return now - parseDuration(text);
  const at = Date.parse(text);
  if (Number.isNaN(at)) {
    throw new UsageError(
      `${option} must be a date (2026-11-01) or a duration (7d, 12h), got "${text}"`,
    );
  }
  return at;
}

/**
 * The repository whose runs to read: a local path (default: the repository the current directory
 * is in), or `owner/name` for the app's runs (with CLUSTERCODE_DYNAMODB_ENDPOINT).
 */
async function repositoryOf(cwd: string, given: string | undefined): Promise<string> {
  if (given === undefined) return (await findGitRoot(cwd)) ?? resolve(cwd);
  const path = resolve(cwd, given);
  return /^[\w.-]+\/[\w.-]+$/.test(given) && !existsSync(path) ? given : path;
}

function table(rows: readonly ScorecardRow[]): string {
  if (rows.length === 0) return "no judge verdicts in these runs\n";
  const lines = [
    ["provider", "model", "verdicts", "overturned", "overturn rate", "independent"],
    ...rows.map((row) => [
      row.provider,
      row.model,
      String(row.verdicts),
      String(row.overturned),
      formatShare(row.overturnRate),
      formatShare(row.independentShare),
    ]),
  ];
  const widths = lines[0]?.map((_, column) =>
    Math.max(...lines.map((l) => l[column]?.length ?? 0)),
  );
  return lines
    .map((line) =>
      line
        .map((cell, column) => cell.padEnd(widths?.[column] ?? 0))
        .join("  ")
        .trimEnd(),
    )
    .join("\n")
    .concat("\n");
}

/**
 * `clustercode scorecard [--since WHEN] [--repo R] [--state-dir D] [--format human|json]`: how
 * often each judge (provider and model) was overturned by what followed its verdicts, and how
 * often it judged independently of the work's author.
 */
export const scorecardCommand: Command = async (args, io) => {
  const { values, positionals } = parseOptions(args, {
    since: { type: "string" },
    repo: { type: "string" },
    "state-dir": { type: "string" },
    format: { type: "string" },
  });
  if (positionals.length > 0)
    throw new UsageError("scorecard takes no arguments", { pointToHelp: true });
  const format = formatOption(values.format, ["human", "json"] as const);
  const since = sinceOf(values.since, Date.now());
  const repo = await repositoryOf(io.cwd, values.repo);
  const stateDir = await usableStateDir(values["state-dir"], io.settings.store);
  const opened = await openStore({ stateDir, settings: io.settings.store });
  try {
    const repository = new RunRepository(opened.store);
    const runs = (await repository.list(repo, { limit: Infinity })).filter(
      (run) => run.stored.createdAt >= since,
    );
    const verdicts = await readVerdicts(runs, repository);
    const rows = scorecard(verdicts);
    io.stdout.write(
      format === "json"
        ? `${JSON.stringify({ repository: repo, since, runs: runs.length, judges: rows, verdicts })}\n`
        : table(rows),
    );
    return 0;
  } finally {
    await opened.close();
  }
};
