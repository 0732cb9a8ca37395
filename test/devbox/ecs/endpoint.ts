/**
 * A local endpoint that speaks the ECS JSON protocol (`X-Amz-Target:
 * AmazonEC2ContainerServiceV20141113.<Operation>`, `application/x-amz-json-1.1`) for the
 * operations the executor uses, on 127.0.0.1. It records every request, dedupes RunTask by
 * `clientToken`, can answer placement `failures[]`, and hands each new task to a launcher.
 */
import { ECSClient, type ECSClientConfig } from "@aws-sdk/client-ecs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

const TARGET_PREFIX = "AmazonEC2ContainerServiceV20141113.";
const ARN = "arn:aws:ecs:eu-west-1:123456789012";

/** A request the endpoint received. */
export interface RecordedRequest {
  operation: string;
  body: Record<string, unknown>;
}

/** A task as the fake keeps it. */
export interface FakeTask {
  taskArn: string;
  taskDefinitionArn: string;
  startedBy: string;
  clientToken: string;
  lastStatus: "RUNNING" | "STOPPED";
  desiredStatus: "RUNNING" | "STOPPED";
  stopCode?: string;
  stoppedReason?: string;
  /** The container's environment: overrides, then the task definition's resolved secrets. */
  environment: Record<string, string>;
  overrides: unknown;
  tags: unknown;
}

/** What happens to a task's "container" (a local process in the tests). */
export interface TaskLauncher {
  launch(task: FakeTask): Promise<void>;
  kill(task: FakeTask): Promise<void>;
}

type Json = Record<string, unknown>;
class AwsFault extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

/** The fake ECS service. */
export class FakeEcs {
  readonly requests: RecordedRequest[] = [];
  readonly tasks = new Map<string, FakeTask>();
  /** Answers for the next RunTasks that place nothing (e.g. `[{ reason: "RESOURCE:MEMORY" }]`). */
  readonly placementFailures: Json[][] = [];
  readonly #definitions = new Map<string, Json[]>();
  readonly #byToken = new Map<string, Json>();
  readonly #server = createServer((request, response) => void this.#handle(request, response));
  #taskCount = 0;

  constructor(
    private readonly launcher: TaskLauncher,
    /** Secret values by ARN, as Secrets Manager would resolve them for the execution role. */
    private readonly secrets: Record<string, string> = {},
  ) {}

  /** Starts serving on 127.0.0.1; returns the endpoint URL. */
  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  /** Stops every task's process and the server. */
  async close(): Promise<void> {
    for (const task of this.tasks.values()) await this.launcher.kill(task);
    this.#server.closeAllConnections();
    await new Promise((resolve) => this.#server.close(resolve));
  }

  /** The bodies of the requests of one operation. */
  sent(operation: string): Json[] {
    return this.requests.filter((r) => r.operation === operation).map((r) => r.body);
  }

  /** Stops a task as EC2 would (a spot interruption...): kills its process, marks it STOPPED. */
  async interrupt(taskArn: string, stopCode: string, stoppedReason: string): Promise<void> {
    const task = this.tasks.get(taskArn);
    if (task === undefined) throw new Error(`no task ${taskArn}`);
    await this.launcher.kill(task);
    Object.assign(task, {
      lastStatus: "STOPPED",
      desiredStatus: "STOPPED",
      stopCode,
      stoppedReason,
    });
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const target = String(request.headers["x-amz-target"] ?? "");
    const operation = target.startsWith(TARGET_PREFIX) ? target.slice(TARGET_PREFIX.length) : "";
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") as Json;
    this.requests.push({ operation, body });
    const reply = (status: number, value: unknown) => {
      response.writeHead(status, { "content-type": "application/x-amz-json-1.1" });
      response.end(JSON.stringify(value));
    };
    if (request.headers["content-type"] !== "application/x-amz-json-1.1") {
      return reply(400, { __type: "SerializationException", message: "bad content type" });
    }
    try {
      reply(200, await this.#answer(operation, body));
    } catch (error) {
      if (!(error instanceof AwsFault)) throw error;
      reply(400, { __type: error.type, message: error.message });
    }
  }

  async #answer(operation: string, body: Json): Promise<unknown> {
    if (body.cluster === "missing") {
      throw new AwsFault("ClusterNotFoundException", "Cluster not found.");
    }
    switch (operation) {
      case "RegisterTaskDefinition": {
        const family = String(body.family);
        const revisions = this.#definitions.get(family) ?? [];
        const definition = {
          ...body,
          status: "ACTIVE",
          revision: revisions.length + 1,
          taskDefinitionArn: `${ARN}:task-definition/${family}:${revisions.length + 1}`,
        };
        this.#definitions.set(family, [...revisions, definition]);
        return { taskDefinition: definition };
      }
      case "DescribeTaskDefinition": {
        const name = String(body.taskDefinition);
        const definition = [...this.#definitions.values()]
          .flat()
          .find((d) => d.family === name || d.taskDefinitionArn === name);
        if (definition === undefined) {
          throw new AwsFault("ClientException", "Unable to describe task definition.");
        }
        return { taskDefinition: definition };
      }
      case "RunTask":
        return this.#runTask(body);
      case "DescribeTasks": {
        const arns = body.tasks as string[];
        return {
          tasks: arns.flatMap((arn) => this.#describe(arn)),
          failures: arns
            .filter((arn) => !this.tasks.has(arn))
            .map((arn) => ({ arn, reason: "MISSING" })),
        };
      }
      case "ListTasks": {
        const desired = (body.desiredStatus as string | undefined) ?? "RUNNING";
        const taskArns = [...this.tasks.values()]
          .filter((t) => t.desiredStatus === desired)
          .filter((t) => body.startedBy === undefined || t.startedBy === body.startedBy)
          .map((t) => t.taskArn);
        return { taskArns };
      }
      case "StopTask": {
        const task = this.tasks.get(String(body.task));
        if (task === undefined) throw new AwsFault("InvalidParameterException", "no such task");
        await this.launcher.kill(task);
        if (task.lastStatus !== "STOPPED") {
          Object.assign(task, {
            lastStatus: "STOPPED",
            desiredStatus: "STOPPED",
            stopCode: "UserInitiated",
            stoppedReason: text(body.reason),
          });
        }
        return { task: this.#describe(task.taskArn)[0] };
      }
      default:
        throw new AwsFault("UnknownOperationException", `not supported: ${operation}`);
    }
  }

  async #runTask(body: Json): Promise<unknown> {
    const token = text(body.clientToken);
    const known = this.#byToken.get(token);
    if (known !== undefined) return known;
    const failures = this.placementFailures.shift();
    if (failures !== undefined) {
      const answer = { tasks: [], failures };
      this.#byToken.set(token, answer);
      return answer;
    }
    const definitionArn = String(body.taskDefinition);
    const definition = [...this.#definitions.values()]
      .flat()
      .find((d) => d.taskDefinitionArn === definitionArn);
    if (definition === undefined) {
      throw new AwsFault("InvalidParameterException", "TaskDefinition not found.");
    }
    const container = (definition.containerDefinitions as Json[])[0] as Json;
    const overrides = body.overrides as { containerOverrides: Json[] };
    const environment: Record<string, string> = {};
    for (const pair of (overrides.containerOverrides[0]?.environment ?? []) as Json[]) {
      environment[String(pair.name)] = String(pair.value);
    }
    for (const secret of (container.secrets ?? []) as Json[]) {
      const value = this.secrets[String(secret.valueFrom)];
      if (value !== undefined) environment[String(secret.name)] = value;
    }
    const task: FakeTask = {
      taskArn: `${ARN}:task/devboxes/${(++this.#taskCount).toString(16).padStart(32, "0")}`,
      taskDefinitionArn: definitionArn,
      startedBy: text(body.startedBy),
      clientToken: token,
      lastStatus: "RUNNING",
      desiredStatus: "RUNNING",
      environment,
      overrides: body.overrides,
      tags: body.tags,
    };
    this.tasks.set(task.taskArn, task);
    await this.launcher.launch(task);
    const answer = { tasks: this.#describe(task.taskArn), failures: [] };
    this.#byToken.set(token, answer);
    return answer;
  }

  #describe(arn: string): Json[] {
    const task = this.tasks.get(arn);
    if (task === undefined) return [];
    const visible: Json = { ...task };
    delete visible.environment;
    delete visible.clientToken;
    return [visible];
  }
}

function text(value: unknown): string {
  return typeof value === "string" ? value : "";
}

/** A launcher that starts nothing (unit tests of the executor). */
export const NO_PROCESS: TaskLauncher = {
  launch: () => Promise.resolve(),
  kill: () => Promise.resolve(),
};

/**
 * The cluster, roles, image and region every ECS executor of the tests runs with (a test
 * overrides what it checks); the fake endpoint takes them as they come.
 */
export const TEST_CLUSTER = {
  cluster: "devboxes",
  capacityProvider: "devbox-asg",
  executionRoleArn: "arn:aws:iam::123456789012:role/devbox-execution",
  taskRoleArn: "arn:aws:iam::123456789012:role/devbox-task",
  defaultImage: "devbox:test",
  region: "eu-west-1",
  secretArnPrefix: "arn:aws:secretsmanager:eu-west-1:123456789012:secret:",
} as const;

/** An ECS client of the SDK for the local endpoint at `endpoint`, in the test cluster's region. */
export function ecsClientOf(endpoint: string, options: Partial<ECSClientConfig> = {}): ECSClient {
  return new ECSClient({
    endpoint,
    region: TEST_CLUSTER.region,
    credentials: { accessKeyId: "test", secretAccessKey: "test" },
    ...options,
  });
}
