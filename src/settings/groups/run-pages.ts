import { text } from "../kinds.js";
import { optional, type SettingGroup } from "../setting.js";

const APP = ["app"] as const;

/** The app's run pages and their GitHub sign-in. */
export const runPages = {
  title: "Run pages",
  about:
    "The app serves run pages, and links them from GitHub, when `CLUSTERCODE_PUBLIC_URL` and the client id and secret are set.",
  settings: {
    publicUrl: optional("CLUSTERCODE_PUBLIC_URL", text(), {
      description:
        "Where people reach the app, e.g. `https://clustercode.example.com`: the base of every link. Unset: no pages, no links.",
      readers: APP,
    }),
    githubClientId: optional("GITHUB_CLIENT_ID", text(), {
      description: "The GitHub App's client id: sign-in with GitHub.",
      readers: APP,
    }),
    githubClientSecret: optional("GITHUB_CLIENT_SECRET", text(), {
      description: "A client secret of the GitHub App.",
      readers: APP,
      secret: true,
    }),
    sessionSecret: optional("CLUSTERCODE_SESSION_SECRET", text(), {
      description: "The key signing session cookies.",
      readers: APP,
      secret: true,
      default: "one generated and kept in the store",
    }),
  },
} satisfies SettingGroup;
