import { httpUrl, text } from "../kinds.js";
import { optional, withDefault, type SettingGroup } from "../setting.js";

const BOTH = ["app", "cli"] as const;

/** Where runs are kept: the embedded store in a state directory, or DynamoDB. */
export const store = {
  title: "Store",
  about:
    "Runs, deliveries and schedules live in an embedded DynamoDB-compatible store in the state directory, or in a DynamoDB table when `CLUSTERCODE_DYNAMODB_ENDPOINT` is set.",
  settings: {
    stateDir: optional("CLUSTERCODE_STATE_DIR", text(), {
      description:
        "The state directory: the embedded store and local DevBoxes. The CLI's `--state-dir` comes first.",
      readers: BOTH,
      default:
        "the app: `.clustercode-state` in the working directory; the CLI: `clustercode` under `XDG_STATE_HOME` (else `~/.local/state`)",
    }),
    xdgStateHome: optional("XDG_STATE_HOME", text(), {
      description: "The CLI's default state directory is `clustercode` under it.",
      readers: ["cli"],
      default: "`~/.local/state`",
    }),
    home: optional("HOME", text(), {
      description:
        "The user's home: the CLI's default state directory, and where the agent finds an agent CLI's sign-in.",
      readers: ["cli", "agent"],
      default: "the operating system's home directory",
    }),
    dynamodbEndpoint: optional("CLUSTERCODE_DYNAMODB_ENDPOINT", httpUrl(), {
      description: "Use this DynamoDB endpoint instead of the embedded store.",
      readers: BOTH,
    }),
    dynamodbTable: withDefault("CLUSTERCODE_DYNAMODB_TABLE", text(), "clustercode", {
      description: "The DynamoDB table, with `CLUSTERCODE_DYNAMODB_ENDPOINT`.",
      readers: BOTH,
    }),
    awsRegion: optional("AWS_REGION", text(), {
      description:
        "The AWS region of DynamoDB (default `us-east-1`), of the ECS executor and of the setup cache bucket.",
      readers: BOTH,
    }),
    awsAccessKeyId: optional("AWS_ACCESS_KEY_ID", text(), {
      description:
        "With `AWS_SECRET_ACCESS_KEY` (and `AWS_SESSION_TOKEN`): DynamoDB credentials; unset, the SDK's default chain.",
      readers: BOTH,
    }),
    awsSecretAccessKey: optional("AWS_SECRET_ACCESS_KEY", text(), {
      description: "See `AWS_ACCESS_KEY_ID`.",
      readers: BOTH,
      secret: true,
    }),
    awsSessionToken: optional("AWS_SESSION_TOKEN", text(), {
      description: "See `AWS_ACCESS_KEY_ID`.",
      readers: BOTH,
      secret: true,
    }),
  },
} satisfies SettingGroup;
