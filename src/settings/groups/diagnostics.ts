import { anyValue, positiveWhole, text } from "../kinds.js";
import { optional, type SettingGroup } from "../setting.js";

/** Switches for people debugging and for the crash tests. */
export const diagnostics = {
  title: "Diagnostics",
  about: "For debugging, and for the tests that crash the app on purpose.",
  settings: {
    debug: optional("CLUSTERCODE_DEBUG", anyValue(), {
      description: "Any value: the CLI prints the stack of an error it reports in one line.",
      readers: ["cli"],
    }),
    faultAt: optional("CLUSTERCODE_FAULT_AT", positiveWhole(), {
      description:
        "Tests only: kill the process with SIGKILL at the Nth effect boundary (saved, performed, recorded).",
      readers: ["app", "cli"],
    }),
    user: optional("USER", text(), {
      description: "Who the CLI records as starting, answering or cancelling a run (else `--as`).",
      readers: ["cli"],
      default: "`local`",
    }),
  },
} satisfies SettingGroup;
