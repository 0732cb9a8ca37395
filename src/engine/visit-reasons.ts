import type { RunSnapshot } from "./model.js";

/**
 * Why a visit ended as it did, in one line, from what the run records: the reason it failed
 * with, else what its verdict or answer said (the feedback it produced: "the judge answered
 * needs-changes: …", "rejected by carol: not now"), else why it was entered again. Untrusted
 * text (judges and people write it): escape it where it is shown.
 */
export function visitReason(state: RunSnapshot, index: number): string | undefined {
  const visit = state.visits[index];
  if (visit === undefined) return undefined;
  if (visit.reason !== undefined) return visit.reason;
  const log = state.feedbackLog ?? [];
  const from = visit.feedbackMark ?? 0;
  const to = state.visits[index + 1]?.feedbackMark ?? log.length;
  const said = log
    .slice(from, to)
    .filter((item) => item.node === visit.node)
    .at(-1);
  if (said !== undefined) {
    const detail = said.detail?.split("\n").find((line) => line.trim() !== "");
    return detail === undefined ? said.summary : `${said.summary}: ${detail.trim()}`;
  }
  const told = visit.fedBack?.at(-1);
  if (told === undefined) return undefined;
  const more = visit.fedBack !== undefined && visit.fedBack.length > 1;
  return `told: ${told}${more ? ` (+${(visit.fedBack?.length ?? 1) - 1} more)` : ""}`;
}
