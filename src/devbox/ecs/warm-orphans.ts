import {
  DescribeTasksCommand,
  ListTasksCommand,
  StopTaskCommand,
  type ECSClient,
} from "@aws-sdk/client-ecs";
import { toEcsError } from "./error.js";

/** Every warm task's `startedBy` (ListTasks matches it exactly). */
export const WARM_STARTED_BY = "clustercode-warm";
/** The tag naming the hub a warm task waits on. */
export const WARM_HUB_TAG = "clustercode:hub";

/**
 * Stops the warm tasks whose hub is gone: those naming `hubUrl` (a process before this one, at
 * the same address, started them) and those whose hub does not answer `GET /internal/warm` (a
 * replica died). Their identities died with their hub, so no claim can ever reach them; their
 * agents would give up after the lapse, and this frees the capacity at once. Returns the ARNs.
 */
export async function stopOrphanWarmTasks(
  client: ECSClient,
  cluster: string,
  hubUrl: string,
  isAlive: (hubUrl: string) => Promise<boolean> = hubAnswers,
): Promise<string[]> {
  const arns: string[] = [];
  let nextToken: string | undefined;
  for (let page = 0; page < 100; page++) {
    const listed = await client
      .send(new ListTasksCommand({ cluster, startedBy: WARM_STARTED_BY, nextToken }))
      .catch((error: unknown) => {
        throw toEcsError(error, "ListTasks");
      });
    arns.push(...(listed.taskArns ?? []));
    nextToken = listed.nextToken;
    if (nextToken === undefined) break;
  }
  const stopped: string[] = [];
  const alive = new Map<string, Promise<boolean>>();
  for (let at = 0; at < arns.length; at += 100) {
    const described = await client
      .send(
        new DescribeTasksCommand({ cluster, tasks: arns.slice(at, at + 100), include: ["TAGS"] }),
      )
      .catch((error: unknown) => {
        throw toEcsError(error, "DescribeTasks");
      });
    for (const task of described.tasks ?? []) {
      const hub = task.tags?.find((tag) => tag.key === WARM_HUB_TAG)?.value;
      if (task.taskArn === undefined || task.lastStatus === "STOPPED") continue;
      if (hub !== undefined && hub !== hubUrl) {
        if (!alive.has(hub)) alive.set(hub, isAlive(hub));
        if (await alive.get(hub)) continue;
      }
      await client
        .send(new StopTaskCommand({ cluster, task: task.taskArn, reason: "orphaned warm task" }))
        .catch((error: unknown) => {
          throw toEcsError(error, "StopTask");
        });
      stopped.push(task.taskArn);
    }
  }
  return stopped;
}

/** Whether a hub answers at `hubUrl` (within 3 s). */
async function hubAnswers(hubUrl: string): Promise<boolean> {
  try {
    const response = await fetch(`${hubUrl}/internal/warm`, {
      signal: AbortSignal.timeout(3000),
    });
    return response.status === 204;
  } catch {
    return false;
  }
}
