import {
  claimDevBox,
  dispatchCommand,
  interruptCommand,
  releaseDevBox,
} from "./devbox-performers.js";
import { askJudge } from "./judge-performer.js";
import { addToLedger } from "./ledger-performer.js";
import type { PerformerTable } from "./performer.js";
import { cancelTimer, setTimer } from "./timer-performers.js";

/**
 * The performer of each effect kind. Evidence is written by the runtime with the receipts
 * (see `AfterEffects`), so performing it records nothing.
 */
export const performers: PerformerTable = {
  "devbox.claim": claimDevBox,
  "devbox.release": releaseDevBox,
  "command.dispatch": dispatchCommand,
  "command.interrupt": interruptCommand,
  "timer.set": setTimer,
  "timer.cancel": cancelTimer,
  "judge.request": askJudge,
  "ledger.add": addToLedger,
  evidence: () => Promise.resolve({ receipt: null }),
};
