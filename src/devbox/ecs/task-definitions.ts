import { createHash } from "node:crypto";
import {
  DescribeTaskDefinitionCommand,
  RegisterTaskDefinitionCommand,
  type ECSClient,
  type RegisterTaskDefinitionCommandInput,
} from "@aws-sdk/client-ecs";
import type { DevBoxSpec } from "../../engine/commands.js";
import { EcsError, toEcsError } from "./error.js";

/** The name of the DevBox container in every DevBox task definition. */
export const DEVBOX_CONTAINER = "devbox";
/** Every DevBox task definition family starts with this; the app's IAM policy names it. */
export const DEVBOX_FAMILY_PREFIX = "clustercode-devbox-";

/** A GitHub repository, `owner/name`. */
export interface RepositoryRef {
  owner: string;
  name: string;
}

/** What a DevBox task definition is made of, besides the spec. */
export interface TaskDefinitionSettings {
  /** Used when the spec names no image. */
  defaultImage: string;
  /** vCPU when the spec says none; default 1. */
  defaultCpu?: number;
  /** MiB when the spec says none; default 2048. */
  defaultMemoryMiB?: number;
  executionRoleArn: string;
  taskRoleArn: string;
  /** `awsvpc` when the tasks get subnets, else `bridge`. */
  networkMode: "awsvpc" | "bridge";
  /** ARN prefix of secrets: `arn:<partition>:secretsmanager:<region>:<account>:secret:`. */
  secretArnPrefix: string;
  /** CloudWatch log group of the DevBox containers (awslogs driver), if any. */
  logGroup?: string;
  region: string;
}

const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const OWNER = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/;
const REPO = /^[A-Za-z0-9._-]{1,100}$/;

/**
 * The ARN of secret `name` of `repository`: `…:secret:clustercode/<owner>/<repo>/<NAME>`. Names
 * are checked so that no spec can reach outside its own repository's prefix.
 */
export function secretArn(prefix: string, repository: RepositoryRef, name: string): string {
  if (!SECRET_NAME.test(name)) {
    throw new EcsError("invalid_request", `"${name}" is not a valid secret name`);
  }
  if (
    !OWNER.test(repository.owner) ||
    !REPO.test(repository.name) ||
    /^\.+$/.test(repository.name)
  ) {
    throw new EcsError(
      "invalid_request",
      `"${repository.owner}/${repository.name}" is not a GitHub repository name`,
    );
  }
  return `${prefix}clustercode/${repository.owner}/${repository.name}/${name}`;
}

/** The RegisterTaskDefinition input for one (image, cpu, memory, secrets) combination. */
export function taskDefinitionInput(
  spec: DevBoxSpec,
  repository: RepositoryRef | undefined,
  settings: TaskDefinitionSettings,
): RegisterTaskDefinitionCommandInput & { family: string } {
  if (spec.secrets.length > 0 && repository === undefined) {
    throw new EcsError(
      "invalid_request",
      "this DevBox needs secrets but its repository is not a GitHub owner/name",
    );
  }
  const secrets = [...new Set(spec.secrets)].sort().map((name) => ({
    name,
    valueFrom: secretArn(settings.secretArnPrefix, repository as RepositoryRef, name),
  }));
  const image = spec.image ?? settings.defaultImage;
  const cpu = Math.round((spec.cpu ?? settings.defaultCpu ?? 1) * 1024);
  const memory = spec.memoryMiB ?? settings.defaultMemoryMiB ?? 2048;
  const body = {
    requiresCompatibilities: ["EC2" as const],
    networkMode: settings.networkMode,
    cpu: String(cpu),
    memory: String(memory),
    executionRoleArn: settings.executionRoleArn,
    taskRoleArn: settings.taskRoleArn,
    containerDefinitions: [
      {
        name: DEVBOX_CONTAINER,
        image,
        essential: true,
        memory,
        secrets,
        // The agent and the commands it runs get a real init as pid 1 (signals, zombies).
        linuxParameters: { initProcessEnabled: true },
        ...(settings.logGroup === undefined
          ? {}
          : {
              logConfiguration: {
                logDriver: "awslogs" as const,
                options: {
                  "awslogs-group": settings.logGroup,
                  "awslogs-region": settings.region,
                  "awslogs-stream-prefix": "devbox",
                },
              },
            }),
      },
    ],
  };
  const hash = createHash("sha256").update(JSON.stringify(body)).digest("hex").slice(0, 20);
  return { family: `${DEVBOX_FAMILY_PREFIX}${hash}`, ...body };
}

/**
 * Task definitions by family: looked up (DescribeTaskDefinition) or registered on first use,
 * then kept. The family is a hash of the whole definition, so a known family never needs
 * checking again, and two replicas registering the same one at once only add a revision.
 */
export class TaskDefinitionCache {
  readonly #arns = new Map<string, Promise<string>>();

  constructor(private readonly client: ECSClient) {}

  /** The ARN of an ACTIVE task definition with this input. */
  ensure(input: RegisterTaskDefinitionCommandInput & { family: string }): Promise<string> {
    const known = this.#arns.get(input.family);
    if (known !== undefined) return known;
    const pending = this.#lookUpOrRegister(input);
    this.#arns.set(input.family, pending);
    // A failure is not cached: the next DevBox asks again.
    pending.catch(() => this.#arns.delete(input.family));
    return pending;
  }

  async #lookUpOrRegister(
    input: RegisterTaskDefinitionCommandInput & { family: string },
  ): Promise<string> {
    try {
      const found = await this.client.send(
        new DescribeTaskDefinitionCommand({ taskDefinition: input.family }),
      );
      const definition = found.taskDefinition;
      if (definition?.status === "ACTIVE" && definition.taskDefinitionArn !== undefined) {
        return definition.taskDefinitionArn;
      }
    } catch (error) {
      // ECS answers ClientException for a family that was never registered.
      const mapped = toEcsError(error, "DescribeTaskDefinition");
      if (mapped.code !== "invalid_request" && mapped.code !== "not_found") throw mapped;
    }
    try {
      const registered = await this.client.send(
        new RegisterTaskDefinitionCommand({
          ...input,
          tags: [{ key: "clustercode:component", value: "devbox" }],
        }),
      );
      const arn = registered.taskDefinition?.taskDefinitionArn;
      if (arn === undefined) {
        throw new EcsError("unknown", "RegisterTaskDefinition answered without an ARN");
      }
      return arn;
    } catch (error) {
      throw toEcsError(error, "RegisterTaskDefinition");
    }
  }
}
