import { commaList, text } from "../kinds.js";
import { optional, withDefault, type SettingGroup } from "../setting.js";

const APP = ["app"] as const;

/** The ECS executor's cluster, roles and image (with `CLUSTERCODE_EXECUTOR=ecs`). */
export const ecs = {
  title: "ECS executor",
  about:
    "Read with `CLUSTERCODE_EXECUTOR=ecs`; the app refuses to start naming every missing or malformed one. The CDK stack sets them all.",
  settings: {
    cluster: optional("CLUSTERCODE_ECS_CLUSTER", text(), {
      description: "The cluster DevBoxes run in (required).",
      readers: APP,
    }),
    capacityProvider: optional("CLUSTERCODE_ECS_CAPACITY_PROVIDER", text(), {
      description: "Its EC2 Auto Scaling group capacity provider (required).",
      readers: APP,
    }),
    subnets: withDefault("CLUSTERCODE_ECS_SUBNETS", commaList(), [], {
      description: "Run tasks with `awsvpc` networking in these subnets (default `bridge`).",
      readers: APP,
    }),
    securityGroups: withDefault("CLUSTERCODE_ECS_SECURITY_GROUPS", commaList(), [], {
      description: "Security groups of `awsvpc` tasks (needs `CLUSTERCODE_ECS_SUBNETS`).",
      readers: APP,
    }),
    executionRoleArn: optional("CLUSTERCODE_ECS_EXECUTION_ROLE_ARN", text(), {
      description:
        "The DevBox execution role's ARN (pulls the image, reads `clustercode/*` secrets; required).",
      readers: APP,
    }),
    taskRoleArn: optional("CLUSTERCODE_ECS_TASK_ROLE_ARN", text(), {
      description: "The DevBox task role's ARN (it has no permissions; required).",
      readers: APP,
    }),
    image: optional("CLUSTERCODE_DEVBOX_IMAGE", text(), {
      description: "The DevBox image a workflow without its own runs (required).",
      readers: APP,
    }),
    logGroup: optional("CLUSTERCODE_ECS_LOG_GROUP", text(), {
      description: "A CloudWatch log group for the DevBox containers.",
      readers: APP,
    }),
    accountId: optional("CLUSTERCODE_AWS_ACCOUNT_ID", text(), {
      description: "The AWS account (12 digits).",
      readers: APP,
      default: "the account of the execution role's ARN",
    }),
    endpoint: optional("CLUSTERCODE_ECS_ENDPOINT", text(), {
      description: "An ECS endpoint (tests, emulators).",
      readers: APP,
    }),
  },
} satisfies SettingGroup;
