/** One variable whose value does not decode. */
export interface SettingProblem {
  name: string;
  message: string;
}

/**
 * The environment holds values that do not decode: the message names each variable and what it
 * expects, one per line, so that the process can say it and stop before doing anything.
 */
export class SettingsError extends Error {
  readonly code = "invalid_settings";
  readonly retryable = false;

  constructor(readonly problems: readonly SettingProblem[]) {
    super(`invalid settings:\n${problems.map((problem) => `  ${problem.message}`).join("\n")}`);
    this.name = "SettingsError";
  }
}
