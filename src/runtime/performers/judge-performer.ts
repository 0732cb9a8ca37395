import { JudgeError } from "../../agents/judge-error.js";
import { gatherJudgeContext } from "../../agents/judge-material.js";
import type { RunEvent } from "../../engine/model.js";
import type { JudgeRequest } from "../judge.js";
import type { PerformContext, Performer } from "./performer.js";

/** Asks the judge; its verdict (or why there is none) comes later, as an event. */
export const askJudge: Performer<"judge.request"> = (context, effect) =>
  Promise.resolve({ receipt: { asked: effect.requestId }, later: judge(context, effect) });

/** Asks the judge with its material; the verdict or the failure as an event. */
async function judge(context: PerformContext, effect: JudgeRequest): Promise<RunEvent> {
  const { requestId } = effect;
  try {
    const [loaded, evidence] = await Promise.all([
      context.runs.get(context.runId),
      context.runs.evidence(context.runId),
    ]);
    const material = await gatherJudgeContext({
      request: effect,
      brief: loaded?.document.definition.brief ?? "",
      ...(loaded === undefined ? {} : { repository: loaded.stored.repo }),
      evidence: evidence.map((record) => record.entry),
      ...(context.diffs === undefined ? {} : { diffs: context.diffs }),
    });
    const verdict = await context.judge.decide(effect, material);
    return { type: "judge.verdict", requestId, ...verdict, at: context.now() };
  } catch (error) {
    const spent = error instanceof JudgeError ? error.spent : {};
    const reason = error instanceof Error ? error.message : String(error);
    return { type: "judge.failed", requestId, reason, ...spent, at: context.now() };
  }
}
