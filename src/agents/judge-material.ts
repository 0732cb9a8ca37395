import type { EvidenceEntry } from "../engine/model.js";
import { DIFF_LIMIT_BYTES, type DiffSource } from "./diff-source.js";
import type { JudgeContext, JudgeRequest } from "./judge-types.js";

/** How many of the latest evidence entries a judge reads. */
export const JUDGE_EVIDENCE_ENTRIES = 40;

/** What the runtime knows that a judge should read. */
export interface JudgeMaterial {
  request: JudgeRequest;
  brief: string;
  /** The source repository (a path or URL), when the runtime knows it. */
  repository?: string;
  /** The run's evidence so far, oldest first. */
  evidence: EvidenceEntry[];
  diffs?: DiffSource;
  /** Bound of all diffs together (default 60 KB), shared among prototype candidates. */
  maxDiffBytes?: number;
}

/**
 * Gathers a judge's context: the brief, the run branch's diff against its base (or each
 * candidate's, for a prototype), and the latest evidence. A diff that cannot be read is
 * replaced by a note saying why, so the judge still answers on the rest.
 */
export async function gatherJudgeContext(material: JudgeMaterial): Promise<JudgeContext> {
  const { request } = material;
  const context: JudgeContext = {
    brief: material.brief,
    evidence: material.evidence.slice(-JUDGE_EVIDENCE_ENTRIES),
  };
  const limit = material.maxDiffBytes ?? DIFF_LIMIT_BYTES;
  const base = request.baseBranch;
  const read = async (head: string, maxBytes: number): Promise<string> => {
    if (material.diffs === undefined || material.repository === undefined || base === undefined)
      return "(no diff available: the runtime has no diff source for this repository)";
    try {
      const diff = await material.diffs.diff({
        repository: material.repository,
        base,
        head,
        maxBytes,
      });
      return diff === "" ? "(empty diff: the branch changes nothing)" : diff;
    } catch (error) {
      return `(diff unavailable: ${error instanceof Error ? error.message : String(error)})`;
    }
  };
  if (request.candidates !== undefined && request.candidates.length > 0) {
    const share = Math.floor(limit / request.candidates.length);
    context.candidates = await Promise.all(
      request.candidates.map(async (candidate) => ({
        ...candidate,
        diff: await read(candidate.branch, share),
      })),
    );
  } else if (request.branch !== undefined) {
    context.diff = await read(request.branch, limit);
  }
  return context;
}
