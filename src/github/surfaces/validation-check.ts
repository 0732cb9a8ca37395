import type { Finding } from "../../workflow/finding.js";
import { callGitHub } from "../client/errors.js";
import type { GitHub, RepoRef } from "../client/github.js";
import { batches, MAX_ANNOTATIONS_PER_REQUEST, truncateText } from "../client/limits.js";
import { readWorkflowFile } from "../client/workflow-source.js";

/** The name of the workflow validation check run. */
export const VALIDATION_CHECK = "ClusterCode · workflow validation";

/** One finding placed in a file. */
export interface PlacedFinding extends Finding {
  file: string;
}

/** A check-run annotation (GitHub's shape). */
export interface Annotation {
  path: string;
  start_line: number;
  end_line: number;
  start_column?: number;
  end_column?: number;
  annotation_level: "failure" | "warning";
  title: string;
  message: string;
}

/** The annotation of a finding, on its line (and column). */
export function annotationOf(finding: PlacedFinding): Annotation {
  return {
    path: finding.file,
    start_line: finding.line,
    end_line: finding.line,
    start_column: finding.column,
    end_column: finding.column,
    annotation_level: finding.severity === "error" ? "failure" : "warning",
    title: finding.rule,
    message: finding.path === "" ? finding.message : `${finding.path}: ${finding.message}`,
  };
}

/** The summary of a validation: counts per file, and a notice that files were checked. */
export function renderValidationSummary(files: string[], findings: PlacedFinding[]): string {
  const errors = findings.filter((finding) => finding.severity === "error").length;
  const warnings = findings.length - errors;
  const lines = [
    `Checked ${files.map((file) => `\`${file}\``).join(", ")}: ${errors} error(s), ${warnings} warning(s).`,
    "",
    ...findings.map((f) => `- \`${f.file}:${f.line}:${f.column}\` **${f.rule}** ${f.message}`),
  ];
  return truncateText(lines.join("\n"));
}

/**
 * Validates the workflow files `paths` at `headSha` with the same validator as `clustercode
 * validate`, and publishes one check run with each finding as an annotation on its line: the
 * first 50 with the create call, the rest in further updates of 50 (GitHub's limit). `extra`:
 * Markdown the summary ends with (a pull request's graph change).
 */
export async function publishValidation(
  gh: GitHub,
  repo: RepoRef,
  headSha: string,
  paths: string[],
  extra?: string,
): Promise<void> {
  const findings: PlacedFinding[] = [];
  const checked: string[] = [];
  for (const path of paths) {
    const file = await readWorkflowFile(gh, repo, path, headSha);
    if (file === undefined) continue;
    checked.push(path);
    findings.push(...file.parsed.findings.map((finding) => ({ ...finding, file: path })));
  }
  if (checked.length === 0) return;
  const failed = findings.some((finding) => finding.severity === "error");
  const title = failed
    ? `${findings.filter((f) => f.severity === "error").length} error(s) in the workflow`
    : findings.length === 0
      ? "The workflow is valid"
      : `${findings.length} warning(s)`;
  const validation = renderValidationSummary(checked, findings);
  const summary = extra === undefined ? validation : truncateText(`${validation}\n\n${extra}`);
  const [first = [], ...rest] = batches(findings.map(annotationOf), MAX_ANNOTATIONS_PER_REQUEST);
  const { data } = await callGitHub("create the validation check run", () =>
    gh.request("POST /repos/{owner}/{repo}/check-runs", {
      owner: repo.owner,
      repo: repo.repo,
      name: VALIDATION_CHECK,
      head_sha: headSha,
      status: "completed",
      conclusion: failed ? "failure" : "success",
      output: { title, summary, annotations: first },
    }),
  );
  for (const annotations of rest) {
    await callGitHub("add validation annotations", () =>
      gh.request("PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}", {
        owner: repo.owner,
        repo: repo.repo,
        check_run_id: Number(data.id),
        output: { title, summary, annotations },
      }),
    );
  }
}
