import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { DeserializeHandlerArguments, HandlerExecutionContext } from "@smithy/types";

/** The rest of a request attempt: the deserializer and the HTTP request. */
type Next = (args: DeserializeHandlerArguments<object>) => Promise<unknown>;

/** How a faulty DynamoDB request goes wrong. */
export type StoreFaultKind =
  /** Refused before the database saw it, as DynamoDB throttles. */
  | "throttled"
  | "throughput"
  /** Never reached the database. */
  | "timeout-before"
  /** Done by the database, its answer lost: the SDK's retry of a conditional write then loses
   * the condition race against the write itself (a ConditionalCheckFailedException). */
  | "timeout-after";

const KINDS: readonly StoreFaultKind[] = [
  "throttled",
  "throughput",
  "timeout-before",
  "timeout-after",
];

/** Which requests may fail, and how often. */
export interface StoreFaultOptions {
  /** Chance that one request attempt fails (0.005 for 0.5 %). */
  rate: number;
  seed: number;
  /** Only requests this accepts may fail (default all). */
  only?: (command: string, input: Record<string, unknown>) => boolean;
  /** The kinds to pick from (default all). */
  kinds?: readonly StoreFaultKind[];
  /** Fail each request at most once, so that the SDK's retry of it gets through. */
  oncePerRequest?: boolean;
}

/** A seeded generator (mulberry32): the same seed draws the same numbers, so a failing case runs again. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function awsError(name: string, status: number, fault: "client" | "server"): Error {
  return Object.assign(new Error(`injected ${name}`), {
    name,
    $fault: fault,
    $metadata: { httpStatusCode: status },
  });
}

/**
 * Fault injection into every DynamoDBClient of this process, as a middleware inside the SDK's
 * retry loop (the deserialize step): the SDK retries a fault as it would a real one, and the
 * store sees what is left (a throttle on every attempt, a condition lost to its own retry).
 * The database behind it is the real dynalite.
 */
export class StoreFaults {
  /** Faults injected, by kind and operation (`timeout-after UpdateItem`). */
  readonly injected = new Map<string, number>();
  /** Attempts seen. */
  attempts = 0;
  #random: () => number;
  readonly #faulted = new WeakSet<object>();

  constructor(private readonly options: StoreFaultOptions) {
    this.#random = seeded(options.seed);
  }

  /** Faults injected in all. */
  get total(): number {
    return [...this.injected.values()].reduce((a, b) => a + b, 0);
  }

  /**
   * Makes this the injector of every DynamoDBClient of the process: each client gets the
   * middleware on its first request, and it asks whichever injector is installed.
   */
  install(): void {
    patchClients();
    installed.faults = this;
  }

  /** Stops injecting (clients keep the middleware, which then passes everything through). */
  uninstall(): void {
    if (installed.faults === this) installed.faults = undefined;
  }

  /** One request attempt, maybe failed. */
  async attempt(next: Next, args: DeserializeHandlerArguments<object>, command: string) {
    this.attempts++;
    const input = args.input as Record<string, unknown>;
    const { rate, only, kinds = KINDS, oncePerRequest = false } = this.options;
    const eligible =
      (only?.(command, input) ?? true) && !(oncePerRequest && this.#faulted.has(input));
    if (!eligible || this.#random() >= rate) return next(args);
    this.#faulted.add(input);
    const kind = kinds[Math.floor(this.#random() * kinds.length)] ?? "throttled";
    const key = `${kind} ${command}`;
    this.injected.set(key, (this.injected.get(key) ?? 0) + 1);
    switch (kind) {
      case "throttled":
        throw awsError("ThrottlingException", 400, "client");
      case "throughput":
        throw awsError("ProvisionedThroughputExceededException", 400, "client");
      case "timeout-before":
        throw awsError("TimeoutError", 0, "client");
      case "timeout-after":
        await next(args);
        throw awsError("TimeoutError", 0, "client");
    }
  }
}

/** The injector every client's middleware asks (none: everything passes). */
const installed: { faults?: StoreFaults | undefined } = {};
let patched = false;

/** Adds the fault middleware to each DynamoDBClient on its first request (once per process). */
function patchClients(): void {
  if (patched) return;
  patched = true;
  const proto = DynamoDBClient.prototype as unknown as {
    send: (this: DynamoDBClient, ...args: unknown[]) => unknown;
  };
  const original = proto.send;
  const clients = new WeakSet<DynamoDBClient>();
  proto.send = function (this: DynamoDBClient, ...args: unknown[]) {
    if (!clients.has(this)) {
      clients.add(this);
      const middleware =
        (next: Next, context: HandlerExecutionContext) =>
        (args: DeserializeHandlerArguments<object>) =>
          installed.faults === undefined
            ? next(args)
            : installed.faults.attempt(next, args, String(context.commandName));
      this.middlewareStack.add(middleware as never, {
        step: "deserialize",
        name: "clustercodeFaults",
        priority: "high",
      });
    }
    return original.apply(this, args);
  };
}
