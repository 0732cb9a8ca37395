/** What the ECS executor reports about a DevBox's task, for the runtime to show. */
export type EcsStatus =
  /** ECS accepted the task (or one was already running for this DevBox). */
  | { state: "started"; devboxId: string; taskArn: string }
  /** RunTask answered `failures[]` (RESOURCE:MEMORY, no capacity...): retrying after a delay. */
  | {
      state: "waiting-for-capacity";
      devboxId: string;
      reason: string;
      /** The attempt that comes next (1 for the first retry). */
      attempt: number;
      retryInMs: number;
    }
  /** Every placement attempt failed; the DevBox is reported lost. */
  | { state: "placement-failed"; devboxId: string; reason: string }
  /** The task stopped without being asked to (spot interruption, crash...). */
  | { state: "stopped"; devboxId: string; taskArn: string; reason: string };
