import { spawn } from "node:child_process";
import { basename } from "node:path";
import { z } from "zod";
import { AnthropicProvider, DEFAULT_ANTHROPIC_JUDGE_MODEL } from "../agents/anthropic-judge.js";
import { JudgeError } from "../agents/judge-error.js";
import type { Judge, JudgeContext, JudgeRequest, Verdict } from "../agents/judge-types.js";
import { DEFAULT_OPENAI_JUDGE_MODEL, OpenAIProvider } from "../agents/openai-judge.js";
import { ProviderJudge } from "../agents/provider-judge.js";
import type { Settings } from "../settings/index.js";

export type { Judge, JudgeContext, JudgeRequest, Verdict } from "../agents/judge-types.js";

const verdictSchema = z.object({
  label: z.string().min(1),
  reasoning: z.string().min(1),
  model: z.string().optional(),
  costUsd: z.number().nonnegative().optional(),
});

/**
 * A judge that is a local program: it reads the request as JSON on stdin (with the judge's
 * material under `context`) and prints `{"label","reasoning"}`. Used offline
 * (`CLUSTERCODE_JUDGE_COMMAND`) and for custom judges.
 */
export class CommandJudge implements Judge {
  constructor(private readonly argv: readonly string[]) {}

  decide(request: JudgeRequest, context?: JudgeContext): Promise<Verdict> {
    const [program, ...args] = this.argv;
    if (program === undefined) {
      return Promise.reject(new JudgeError("not_configured", "the judge command is empty"));
    }
    return new Promise((resolve, reject) => {
      const child = spawn(program, args, { stdio: ["pipe", "pipe", "inherit"] });
      let stdout = "";
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
      child.on("error", (error) =>
        reject(
          new JudgeError(
            "command_failed",
            `the judge command could not run: ${error.message}`,
            {},
            { cause: error },
          ),
        ),
      );
      child.on("close", (code) => {
        if (code !== 0) {
          return reject(new JudgeError("command_failed", `the judge command exited ${code}`));
        }
        try {
          const verdict = verdictSchema.parse(JSON.parse(stdout));
          // Credited to the command, not to the provider the workflow declares.
          resolve({
            label: verdict.label,
            reasoning: verdict.reasoning,
            provider: "command",
            model: verdict.model ?? basename(program),
            ...(verdict.costUsd === undefined ? {} : { costUsd: verdict.costUsd }),
          });
        } catch (error) {
          reject(
            new JudgeError(
              "invalid_verdict",
              `the judge command printed no valid verdict: ${(error as Error).message}`,
              {},
              { cause: error },
            ),
          );
        }
      });
      // A judge that does not read its input is fine: ignore the broken pipe.
      child.stdin.on("error", () => undefined);
      child.stdin.end(JSON.stringify(context === undefined ? request : { ...request, context }));
    });
  }
}

/** The judge when none is configured: every decision fails with a reason that says how to fix it. */
export const NO_JUDGE: Judge = {
  decide: () =>
    Promise.reject(
      new JudgeError(
        "not_configured",
        "no judge is configured: set ANTHROPIC_API_KEY or OPENAI_API_KEY for the judge's provider, or CLUSTERCODE_JUDGE_COMMAND",
      ),
    ),
};

/** The decoded settings a judge is chosen by (the settings' `providers` group). */
export type JudgeSettings = Pick<
  Settings["providers"],
  "judgeCommand" | "anthropicApiKey" | "openaiApiKey" | "anthropicBaseUrl" | "openaiBaseUrl"
>;

/** Options for {@link judgeFromSettings} beyond the settings. */
export interface JudgeOptions {
  /** SDK retries on 429/5xx before a judge fails (default 2). */
  maxRetries?: number;
}

/**
 * The judge the environment configures. `CLUSTERCODE_JUDGE_COMMAND` (a program, or a JSON argv)
 * takes precedence and judges every request; otherwise each request goes to its own provider
 * (`judge.provider`) when that provider's key is set (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`;
 * `ANTHROPIC_BASE_URL` and `OPENAI_BASE_URL` are honoured), and fails saying which key is
 * missing when it is not. With neither, {@link NO_JUDGE}.
 */
export function judgeFromSettings(providers: JudgeSettings, options: JudgeOptions = {}): Judge {
  const command = providers.judgeCommand;
  if (command !== undefined && command.trim() !== "") {
    const argv = command.trim().startsWith("[") ? (JSON.parse(command) as string[]) : [command];
    return new CommandJudge(argv);
  }
  const anthropicKey = nonEmpty(providers.anthropicApiKey);
  const openaiKey = nonEmpty(providers.openaiApiKey);
  if (anthropicKey === undefined && openaiKey === undefined) return NO_JUDGE;
  const retries = options.maxRetries === undefined ? {} : { maxRetries: options.maxRetries };
  const judges: Partial<Record<string, Judge>> = {};
  if (anthropicKey !== undefined) {
    const baseURL = nonEmpty(providers.anthropicBaseUrl);
    const provider = new AnthropicProvider({
      apiKey: anthropicKey,
      ...retries,
      ...(baseURL === undefined ? {} : { baseURL }),
    });
    judges.anthropic = new ProviderJudge(provider, DEFAULT_ANTHROPIC_JUDGE_MODEL);
  }
  if (openaiKey !== undefined) {
    const baseURL = nonEmpty(providers.openaiBaseUrl);
    const provider = new OpenAIProvider({
      apiKey: openaiKey,
      ...retries,
      ...(baseURL === undefined ? {} : { baseURL }),
    });
    judges.openai = new ProviderJudge(provider, DEFAULT_OPENAI_JUDGE_MODEL);
  }
  return {
    decide(request, context) {
      const judge = judges[request.judge.provider];
      if (judge !== undefined) return judge.decide(request, context);
      const key = request.judge.provider === "openai" ? "OPENAI_API_KEY" : "ANTHROPIC_API_KEY";
      return Promise.reject(
        new JudgeError(
          "not_configured",
          `the ${request.judge.provider} judge needs ${key} in the app's environment`,
        ),
      );
    },
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value;
}
