import { oneOf, text, whole } from "../kinds.js";
import { optional, withDefault, type SettingGroup } from "../setting.js";

const BOTH = ["app", "cli"] as const;

/** Model providers: the judges' keys, and the hub's proxy that DevBoxes reach them through. */
export const providers = {
  title: "Model providers and judges",
  about:
    "API keys come only from the environment of the app or the CLI, never from a workflow file. With no key and no judge command, every agent decision fails with a message naming what to set.",
  settings: {
    anthropicApiKey: optional("ANTHROPIC_API_KEY", text(), {
      description:
        "Enables the `anthropic` judge provider; DevBoxes reach Anthropic through the hub's proxy with it.",
      readers: BOTH,
      secret: true,
    }),
    openaiApiKey: optional("OPENAI_API_KEY", text(), {
      description:
        "Enables the `openai` judge provider; DevBoxes reach OpenAI through the hub's proxy with it.",
      readers: BOTH,
      secret: true,
    }),
    anthropicBaseUrl: optional("ANTHROPIC_BASE_URL", text(), {
      description:
        "A gateway or proxy for Anthropic, as the SDK reads it; the hub forwards DevBoxes' requests there too.",
      readers: BOTH,
      default: "`https://api.anthropic.com`",
    }),
    openaiBaseUrl: optional("OPENAI_BASE_URL", text(), {
      description:
        "A gateway or proxy for OpenAI, as the SDK reads it; the hub forwards DevBoxes' requests there too.",
      readers: BOTH,
      default: "`https://api.openai.com/v1`",
    }),
    judgeCommand: optional("CLUSTERCODE_JUDGE_COMMAND", text(), {
      description:
        'A local judge program (a path, or a JSON argv such as `["node","judge.mjs"]`): it reads the request and its material as JSON on stdin and prints `{"label","reasoning"}`; it judges every request and takes precedence over the providers.',
      readers: BOTH,
    }),
    providerProxy: withDefault("CLUSTERCODE_PROVIDER_PROXY", oneOf(["on", "off"]), "on", {
      description:
        "`off`: give DevBoxes the provider keys they list instead of a placeholder and the hub's proxy.",
      readers: BOTH,
    }),
    providerRequests: withDefault("CLUSTERCODE_PROVIDER_REQUESTS", whole(1, 1000), 4, {
      description:
        "Provider requests a DevBox may have in flight through the hub's proxy; more are answered 429.",
      readers: BOTH,
    }),
  },
} satisfies SettingGroup;
