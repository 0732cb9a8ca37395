import type { TokenUsage } from "../workflow/model-prices.js";
/**
 * What a DevBox is asked to do. These travel from the runtime to the DevBox agent over the
 * internal API; untrusted text (the brief, gate output) is carried in files and environment
 * variables, never spliced into a command line.
 */
export type DevBoxCommand =
  /** A trusted script from the workflow file, run with `bash -eo pipefail -c`. */
  | { type: "script"; script: string }
  /**
   * An agent CLI: `argv` is spawned without a shell after `{prompt_file}` and `{model}` are
   * replaced; the prompt is written to a file first.
   */
  | {
      type: "agent";
      argv: string[];
      prompt: string;
      model?: string;
      costJsonPath?: string;
      /** Dotted path to the token usage object in the JSON the agent prints last. */
      usageJsonPath?: string;
      /** Dotted paths to each token count in the JSON the agent prints last. */
      usagePaths?: UsagePaths;
      /** Price the reported usage on `model` when the agent reports no cost. */
      priceFromUsage?: boolean;
      /** What must be in the DevBox for the agent to authenticate; checked before it starts. */
      credentials?: EngineCredentials;
    }
  /** Commit every change and push the branch; the result carries the commit SHA. */
  | { type: "checkpoint"; message: string };

/** Dotted paths to an agent's token counts in the JSON it prints last. */
export interface UsagePaths {
  inputTokens: string;
  outputTokens: string;
  cachedInputTokens?: string;
}

/**
 * How an agent CLI authenticates: one of `env` set (non-empty) in the DevBox's environment, or
 * one of `homeFiles` (relative to HOME) present, such as a login the CLI stored.
 */
export interface EngineCredentials {
  env: string[];
  homeFiles?: string[];
}

/** A command addressed to one DevBox under its idempotency key. */
export interface CommandRequest {
  /** Unique per run and attempt; a DevBox never runs one id twice. */
  commandId: string;
  command: DevBoxCommand;
  /** Extra environment for the command, e.g. CLUSTERCODE_FEEDBACK_FILE contents by name. */
  files?: Record<string, string>;
  /**
   * For a command of a run with a cost budget: what is left of it. The hub's provider proxy
   * refuses the DevBox's requests (an agent's or a script's) once their replies cost this much.
   */
  spendLimitUsd?: number;
  /**
   * With `spendLimitUsd`: the provider-proxy spend the run's cost already counts, so that the
   * proxy can subtract what it has seen since (replies the engine has not been told of yet).
   */
  proxiedUsd?: number;
}

/** What a DevBox reports when a command ends. */
export interface CommandResult {
  commandId: string;
  exitCode: number;
  /** The last part of combined stdout and stderr (bounded). */
  output: string;
  durationMs: number;
  /**
   * Cost in US dollars: what the agent reported, or what the hub's provider proxy counted for
   * it when that is more.
   */
  costUsd?: number;
  /** Set by the hub (never by the DevBox): what its provider proxy counted since the last result. */
  proxiedCostUsd?: number;
  /** Tokens the agent reported using, when it did. */
  usage?: TokenUsage;
  /**
   * Why the command failed that its exit code does not say: the DevBox did not start it (an
   * agent without credentials), or the hub's provider proxy refused one of its requests outright
   * under the cost budget (a model without a price). The node's failure reason.
   */
  refused?: string;
  /** The commit a checkpoint made or found. */
  sha?: string;
  /** What the command wrote to CLUSTERCODE_OUTPUT_FILE, when it was given one (bounded). */
  outputFile?: string;
  /**
   * Set (with exit code 125) when the command had been started by an earlier agent in the same
   * checkout that stopped before it reported: its outcome is unknown, so treat it like a lost
   * DevBox (re-run only when the node is idempotent), never as a plain failure.
   */
  interrupted?: boolean;
}

/** How a DevBox is set up when it is claimed. */
export interface DevBoxSpec {
  image?: string;
  cpu?: number;
  memoryMiB?: number;
  /** Branch the DevBox checks out (created from `baseBranch` when missing). */
  branch: string;
  baseBranch: string;
  /**
   * The commit the DevBox must start on: the run's last checkpoint, once there is one. The
   * DevBox resets `branch` to it (fetched by sha when its copy lacks it) and reports its head;
   * the engine refuses a DevBox that reports another.
   */
  sha?: string;
  setup: string[];
  /** `devbox.cache`: what setup makes, restored before it and saved after it (see the agent). */
  cache?: { key: string[]; paths: string[] }[];
  secrets: string[];
  /** The agent CLIs (argv[0]) the run may start: the DevBox reports each one's `--version`. */
  harnesses?: string[];
  /** `devbox.network.allow` as written (hosts and shortcuts); unset: the hub's default. */
  networkAllow?: string[];
  /**
   * `devbox.warm`: how many DevBoxes like this one to keep ready, cloned at the head of the
   * repository's default `branch`. Unset: none (a pool kept for this spec stops).
   */
  warm?: { count: number; branch: string };
}

export type { TokenUsage };
