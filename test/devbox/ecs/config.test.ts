import { afterEach, describe, expect, it } from "vitest";
import type { DevBoxSpec } from "../../../src/engine/commands.js";
import { ecsExecutorFromEnv } from "../../../src/devbox/ecs/config.js";
import type { EcsExecutor } from "../../../src/devbox/ecs/executor.js";
import { FakeEcs, NO_PROCESS } from "./endpoint.js";

const spec: DevBoxSpec = {
  branch: "clustercode/7-r1",
  baseBranch: "main",
  setup: [],
  secrets: ["NPM_TOKEN"],
};

let fake: FakeEcs | undefined;
let executor: EcsExecutor | undefined;
afterEach(async () => {
  executor?.close();
  await fake?.close();
});

describe("ecsExecutorFromEnv", () => {
  it("names every missing or malformed variable", () => {
    expect(() =>
      ecsExecutorFromEnv({
        CLUSTERCODE_ECS_EXECUTION_ROLE_ARN: "devbox-execution",
        CLUSTERCODE_ECS_SECURITY_GROUPS: "sg-1",
      }),
    ).toThrow(
      "ECS executor: CLUSTERCODE_ECS_CLUSTER is not set; CLUSTERCODE_ECS_CAPACITY_PROVIDER is not set; " +
        "CLUSTERCODE_ECS_TASK_ROLE_ARN is not set; CLUSTERCODE_DEVBOX_IMAGE is not set; " +
        'AWS_REGION is not set; CLUSTERCODE_ECS_EXECUTION_ROLE_ARN must be an IAM role ARN, got "devbox-execution"; ' +
        "CLUSTERCODE_ECS_SECURITY_GROUPS needs CLUSTERCODE_ECS_SUBNETS (awsvpc networking)",
    );
  });

  it("builds an executor that talks to the configured endpoint", async () => {
    fake = new FakeEcs(NO_PROCESS);
    const endpoint = await fake.listen();
    process.env.AWS_ACCESS_KEY_ID = "test";
    process.env.AWS_SECRET_ACCESS_KEY = "test";
    executor = ecsExecutorFromEnv({
      CLUSTERCODE_EXECUTOR: "ecs",
      CLUSTERCODE_ECS_CLUSTER: "devboxes",
      CLUSTERCODE_ECS_CAPACITY_PROVIDER: "devbox-asg",
      CLUSTERCODE_ECS_EXECUTION_ROLE_ARN: "arn:aws:iam::210987654321:role/exec",
      CLUSTERCODE_ECS_TASK_ROLE_ARN: "arn:aws:iam::210987654321:role/task",
      CLUSTERCODE_DEVBOX_IMAGE: "devbox:latest",
      CLUSTERCODE_DEVBOX_LAPSE_MS: "20000",
      AWS_REGION: "eu-central-1",
      CLUSTERCODE_ECS_ENDPOINT: endpoint,
    });
    await executor.start({
      devboxId: "r1-d1",
      runId: "r1",
      apiUrl: "http://10.0.0.5:8080",
      token: "t",
      repository: "acme/widgets",
      spec,
    });
    const [definition] = fake.sent("RegisterTaskDefinition");
    expect(definition).toMatchObject({
      networkMode: "bridge",
      containerDefinitions: [
        {
          image: "devbox:latest",
          secrets: [
            {
              name: "NPM_TOKEN",
              valueFrom:
                "arn:aws:secretsmanager:eu-central-1:210987654321:secret:clustercode/acme/widgets/NPM_TOKEN",
            },
          ],
        },
      ],
    });
    const [run] = fake.sent("RunTask");
    expect(run?.networkConfiguration).toBeUndefined();
    expect(JSON.stringify(run?.overrides)).toContain(
      '"CLUSTERCODE_DEVBOX_LAPSE_MS","value":"20000"',
    );
  });
});
