import { spawn } from "node:child_process";
import { z } from "zod";
import type { Effect } from "../engine/model.js";

/** What a judge is asked: pick one of `labels` for `question`. */
export type JudgeRequest = Extract<Effect, { type: "judge.request" }>;

/** A judge's forced choice, with its reasoning kept as evidence. */
export interface Verdict {
  label: string;
  reasoning: string;
  model?: string;
  costUsd?: number;
}

/** Decides agent decisions and prototype races. */
export interface Judge {
  decide(request: JudgeRequest): Promise<Verdict>;
}

const verdictSchema = z.object({
  label: z.string().min(1),
  reasoning: z.string().min(1),
  model: z.string().optional(),
  costUsd: z.number().nonnegative().optional(),
});

/**
 * A judge that is a local program: it reads the request as JSON on stdin and prints
 * `{"label","reasoning"}`. Used offline (`CLUSTERCODE_JUDGE_COMMAND`) and for custom judges.
 */
export class CommandJudge implements Judge {
  constructor(private readonly argv: readonly string[]) {}

  decide(request: JudgeRequest): Promise<Verdict> {
    const [program, ...args] = this.argv;
    if (program === undefined) return Promise.reject(new Error("the judge command is empty"));
    return new Promise((resolve, reject) => {
      const child = spawn(program, args, { stdio: ["pipe", "pipe", "inherit"] });
      let stdout = "";
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
      child.on("error", reject);
      child.on("close", (code) => {
        if (code !== 0) return reject(new Error(`the judge command exited ${code}`));
        try {
          const verdict = verdictSchema.parse(JSON.parse(stdout));
          resolve({
            label: verdict.label,
            reasoning: verdict.reasoning,
            ...(verdict.model === undefined ? {} : { model: verdict.model }),
            ...(verdict.costUsd === undefined ? {} : { costUsd: verdict.costUsd }),
          });
        } catch (error) {
          reject(
            new Error(`the judge command printed no valid verdict: ${(error as Error).message}`),
          );
        }
      });
      child.stdin.end(JSON.stringify(request));
    });
  }
}

/** The judge when none is configured: every decision fails with a reason that says how to fix it. */
export const NO_JUDGE: Judge = {
  decide: () =>
    Promise.reject(
      new Error("no judge is configured: set CLUSTERCODE_JUDGE_COMMAND, or a provider API key"),
    ),
};

/** The judge the environment configures. */
export function judgeFromEnv(env: NodeJS.ProcessEnv): Judge {
  const command = env.CLUSTERCODE_JUDGE_COMMAND;
  if (command === undefined || command === "") return NO_JUDGE;
  const argv = command.trim().startsWith("[") ? (JSON.parse(command) as string[]) : [command];
  return new CommandJudge(argv);
}
