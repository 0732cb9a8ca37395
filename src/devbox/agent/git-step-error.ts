import { AppError } from "../../errors/app-error.js";

/** A git step that failed, with the exit code of the step. */
export class GitStepError extends AppError<"git-step-failed"> {
  override readonly name = "GitStepError";
  readonly exitCode: number;

  constructor(step: string, exitCode: number) {
    super("git-step-failed", `git ${step} exited with ${exitCode}`);
    this.exitCode = exitCode;
  }
}
