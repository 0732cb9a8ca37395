import { describeDiff, renderDiffMermaid } from "../../workflow/diff-mermaid.js";
import { diffGraphs } from "../../workflow/graph-diff.js";
import type { Workflow } from "../../workflow/workflow.schema.js";
import { createMarkedComment, findMarkedComments, updateComment } from "./comments.js";
import type { GitHub, RepoRef } from "../client/github.js";
import { readWorkflowFile } from "../client/workflow-source.js";

const EMPTY = { nodes: {}, edges: [] } as unknown as Workflow;

/**
 * The graph's change of each workflow file a pull request changes, as Markdown with Mermaid
 * pictures (the change, then before and after): undefined when no graph changed or a side does
 * not parse (the validation check says why).
 */
export async function renderGraphChange(
  gh: GitHub,
  repo: RepoRef,
  refs: { base: string; head: string },
  paths: string[],
): Promise<string | undefined> {
  const sections: string[] = [];
  for (const path of paths) {
    const before = await readWorkflowFile(gh, repo, path, refs.base);
    const after = await readWorkflowFile(gh, repo, path, refs.head);
    if (after === undefined || !after.parsed.ok) continue;
    if (before !== undefined && !before.parsed.ok) continue;
    const diff = diffGraphs(
      before?.parsed.ok === true ? before.parsed.workflow : EMPTY,
      after.parsed.workflow,
    );
    if (!diff.changed) continue;
    const picture = (side: "before" | "after") =>
      `<details><summary>${side === "before" ? "Before" : "After"}</summary>\n\n\`\`\`mermaid\n${renderDiffMermaid(diff, side)}\`\`\`\n\n</details>`;
    sections.push(
      [
        `### \`${path}\`: ${describeDiff(diff)}`,
        "",
        "Added in green (+), removed in red and dashed (−), changed in amber (~).",
        "",
        "```mermaid",
        renderDiffMermaid(diff).trimEnd(),
        "```",
        "",
        picture("before"),
        "",
        picture("after"),
      ].join("\n"),
    );
  }
  return sections.length === 0 ? undefined : `## The graph's change\n\n${sections.join("\n\n")}`;
}

/**
 * Keeps one comment on the pull request showing the graph's change, edited in place on each
 * push: created when a change first appears, rewritten (never duplicated) after.
 */
export async function publishGraphChangeComment(
  gh: GitHub,
  repo: RepoRef,
  pull: number,
  markdown: string | undefined,
  botLogin: string,
): Promise<void> {
  const marker = `<!-- clustercode:graph:pull-${pull} -->`;
  const existing = (await findMarkedComments(gh, repo, pull, botLogin)).get(marker);
  if (existing === undefined && markdown === undefined) return;
  const body = `${marker}\n${markdown ?? "## The graph's change\n\nThe workflows' graphs are as on the base branch now."}`;
  if (existing === undefined || !(await updateComment(gh, repo, existing, body)))
    await createMarkedComment(gh, repo, pull, marker, body, botLogin);
}
