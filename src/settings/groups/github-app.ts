import {
  commaList,
  gapMilliseconds,
  milliseconds,
  oneOf,
  positiveWhole,
  text,
  whole,
} from "../kinds.js";
import { optional, withDefault, type SettingGroup } from "../setting.js";

const APP = ["app"] as const;

/** The GitHub App: its registration, its server, and how it paces itself on GitHub. */
export const githubApp = {
  title: "The GitHub App",
  about:
    "Probot reads its own variables (`APP_ID`, `PRIVATE_KEY`, `LOG_LEVEL`, …) as well; they are decoded here too, so that a bad value stops the app at start. Without `APP_ID` (in the environment or `.env`) `npm start` serves the setup page.",
  settings: {
    appId: optional("APP_ID", positiveWhole(), {
      description: "The app's id. Unset outside production: the setup page registers the app.",
      readers: APP,
    }),
    privateKey: optional("PRIVATE_KEY", text(), {
      description: "The app's private key (PEM).",
      readers: APP,
      secret: true,
    }),
    privateKeyPath: optional("PRIVATE_KEY_PATH", text(), {
      description: "A file holding the app's private key, instead of `PRIVATE_KEY`.",
      readers: APP,
    }),
    webhookSecret: withDefault("WEBHOOK_SECRET", text(), "development", {
      description: "The webhook secret: every delivery's signature is verified against it.",
      readers: APP,
      secret: true,
    }),
    webhookPath: withDefault("WEBHOOK_PATH", text(), "/api/github/webhooks", {
      description: "The path GitHub delivers webhooks to.",
      readers: APP,
    }),
    webhookProxyUrl: optional("WEBHOOK_PROXY_URL", text(), {
      description:
        "Development: a smee.io channel GitHub delivers to and Probot forwards from. Leave unset in production.",
      readers: APP,
    }),
    gheHost: optional("GHE_HOST", text(), {
      description:
        "A GitHub Enterprise Server host (optionally `:port`): the API's and the clones' host.",
      readers: APP,
      default: "`github.com`",
    }),
    gheProtocol: withDefault("GHE_PROTOCOL", oneOf(["https", "http"]), "https", {
      description: "How to reach `GHE_HOST`: `http` for an on-premises or loopback server.",
      readers: APP,
    }),
    maxWebhookBytes: withDefault(
      "CLUSTERCODE_MAX_WEBHOOK_BYTES",
      whole(1, 25 * 1024 * 1024, " of bytes"),
      5 * 1024 * 1024,
      {
        description:
          "The largest webhook body the app reads; a larger one is answered 413 at once (GitHub's own cap is 25 MB).",
        readers: APP,
      },
    ),
    host: withDefault("HOST", text(), "localhost", {
      description: "The address the server listens on (`0.0.0.0` in a container).",
      readers: APP,
    }),
    port: withDefault("PORT", whole(1, 65535), 3000, {
      description: "The port the server listens on.",
      readers: APP,
    }),
    nodeEnv: optional("NODE_ENV", text(), {
      description:
        "`production`: Probot refuses to start without `APP_ID` and the private key instead of serving the setup page.",
      readers: APP,
    }),
    logLevel: withDefault(
      "LOG_LEVEL",
      oneOf(["trace", "debug", "info", "warn", "error", "fatal", "silent"]),
      "info",
      {
        description: "Probot's log level.",
        readers: APP,
      },
    ),
    ghOrg: optional("GH_ORG", text(), {
      description: "The setup page registers the app in this organization instead of your account.",
      readers: APP,
    }),
    ackDeadlineMs: withDefault("CLUSTERCODE_ACK_DEADLINE_MS", milliseconds(), 5000, {
      description:
        "How long a webhook waits for its delivery to be recorded before it is answered anyway (202); the delivery is then picked up by the sweep.",
      readers: APP,
    }),
    deliverySweepMs: withDefault("CLUSTERCODE_DELIVERY_SWEEP_MS", milliseconds(), 1000, {
      description:
        "How often the app sweeps the store for deliveries a replica recorded but did not handle, and renews its liveness lease; a replica silent for five periods is taken for gone and its deliveries are handled by another.",
      readers: APP,
    }),
    writeGapMs: withDefault("CLUSTERCODE_GITHUB_WRITE_GAP_MS", gapMilliseconds(), 1000, {
      description: "The gap the app keeps per installation between GitHub writes.",
      readers: APP,
    }),
    notificationGapMs: withDefault(
      "CLUSTERCODE_GITHUB_NOTIFICATION_GAP_MS",
      gapMilliseconds(),
      3000,
      {
        description:
          "The gap the app keeps per installation between notifying writes, such as comments.",
        readers: APP,
      },
    ),
    prReady: withDefault("CLUSTERCODE_PR_READY", oneOf(["on-success", "never"]), "on-success", {
      description:
        "`on-success`: the run's pull request leaves draft when the run succeeds; `never`: it stays draft.",
      readers: APP,
    }),
    scorecardRepos: withDefault("CLUSTERCODE_SCORECARD_REPOS", commaList(), [], {
      description:
        "Repositories (`owner/name`) that get the weekly judge scorecard comment on a tracking issue.",
      readers: APP,
    }),
  },
} satisfies SettingGroup;
