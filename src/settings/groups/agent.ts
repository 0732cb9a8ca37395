import { flag, jsonStrings, text } from "../kinds.js";
import { optional, withDefault, type SettingGroup } from "../setting.js";

const AGENT = ["agent"] as const;

/**
 * What the executor sets for a DevBox's agent (`clustercode devbox`). Nobody sets these by hand;
 * they are listed so that every variable the code reads is in one place.
 */
export const agent = {
  title: "DevBox agent (set by the executor)",
  about:
    "The executor sets these for the agent inside each DevBox; the agent refuses to start, naming what is wrong, when one is missing or malformed. The DevBox timings are above.",
  settings: {
    token: optional("CLUSTERCODE_DEVBOX_TOKEN", text(), {
      description:
        "The DevBox's hub token, when not read from stdin (`--token-stdin`); never passed on to commands.",
      readers: AGENT,
      secret: true,
    }),
    runId: optional("CLUSTERCODE_RUN_ID", text(), {
      description: "The run id (required); passed on to every command.",
      readers: AGENT,
    }),
    branch: optional("CLUSTERCODE_BRANCH", text(), {
      description: "The run branch the DevBox checks out and pushes checkpoints to (required).",
      readers: AGENT,
    }),
    baseBranch: optional("CLUSTERCODE_BASE_BRANCH", text(), {
      description: "The branch a missing run branch is created from (required).",
      readers: AGENT,
    }),
    startSha: optional("CLUSTERCODE_START_SHA", text(), {
      description:
        "The commit the DevBox starts on: the run's last checkpoint, fetched by its id when the checkout lacks it, the run branch reset to it; unset before the run's first checkpoint.",
      readers: AGENT,
    }),
    setup: withDefault("CLUSTERCODE_SETUP", jsonStrings(), [], {
      description: "The workflow's setup commands.",
      readers: AGENT,
    }),
    setupCache: optional("CLUSTERCODE_SETUP_CACHE", text(), {
      description: "The workflow's `devbox.cache` entries, a JSON array of `{ key, paths }`.",
      readers: AGENT,
    }),
    setupCacheDirs: withDefault("CLUSTERCODE_SETUP_CACHE_DIRS", jsonStrings(), [], {
      description:
        "Where the setup cache is looked up, in order; saves go to the first (the run branch's). None (ECS DevBoxes): the agent keeps the cache through the hub's cache route.",
      readers: AGENT,
    }),
    secretNames: withDefault("CLUSTERCODE_SECRET_NAMES", jsonStrings(), [], {
      description:
        "The names of the variables that hold secrets: their values are masked in all output the agent logs or reports.",
      readers: AGENT,
    }),
    harnesses: withDefault("CLUSTERCODE_HARNESSES", jsonStrings(), [], {
      description: "The agent CLIs whose `--version` the agent reports when ready.",
      readers: AGENT,
    }),
    gitViaHub: optional("CLUSTERCODE_GIT_VIA_HUB", flag(), {
      description:
        "`1`: the checkout's origin is the hub's git route, authenticated with the DevBox's hub token.",
      readers: AGENT,
    }),
    hubSocket: optional("CLUSTERCODE_HUB_SOCKET", text(), {
      description:
        "The hub relay's unix socket, for the agent's 127.0.0.1 gateway (local DevBoxes).",
      readers: AGENT,
    }),
    isolation: optional("CLUSTERCODE_DEVBOX_ISOLATION", text(), {
      description: "How the DevBox is isolated, as the evidence of its runs says it.",
      readers: AGENT,
    }),
    commandSandbox: optional("CLUSTERCODE_COMMAND_SANDBOX", text(), {
      description:
        "How each command is kept from acting as the agent: `bwrap`, `setpriv:<user>` or `none`.",
      readers: AGENT,
      default: "`none`",
    }),
    apiUrl: optional("CLUSTERCODE_API_URL", text(), {
      description: "ECS images: the internal API's base URL, read by the image's entrypoint.",
      readers: AGENT,
    }),
    devboxId: optional("CLUSTERCODE_DEVBOX_ID", text(), {
      description: "ECS images: the DevBox id, read by the image's entrypoint.",
      readers: AGENT,
    }),
    repository: optional("CLUSTERCODE_REPOSITORY", text(), {
      description: "ECS images: the URL to clone (the hub's git route), read by the entrypoint.",
      readers: AGENT,
    }),
    warmId: optional("CLUSTERCODE_WARM_ID", text(), {
      description:
        "ECS images, warm tasks only: the task's single-use warm identity (no DevBox yet), read by the entrypoint.",
      readers: AGENT,
    }),
    warmToken: optional("CLUSTERCODE_WARM_TOKEN", text(), {
      description:
        "ECS images, warm tasks only: the warm identity's token, handed to the agent on stdin by the entrypoint.",
      readers: AGENT,
      secret: true,
    }),
    warmBranch: optional("CLUSTERCODE_WARM_BRANCH", text(), {
      description:
        "ECS images, warm tasks only: the default branch the entrypoint clones before any claim.",
      readers: AGENT,
    }),
  },
} satisfies SettingGroup;
