import { createHash, randomBytes } from "node:crypto";
import {
  context,
  metrics,
  ROOT_CONTEXT,
  trace,
  TraceFlags,
  type Attributes,
  type Context,
  type Link,
  type Meter,
  type SpanContext,
} from "@opentelemetry/api";
import { readFileSync } from "node:fs";
import { NodeSDK, resources } from "@opentelemetry/sdk-node";
import type { Effect, RunDocument } from "../engine/model.js";
import { spansOf, type RunSpan, type SeenBefore } from "./run-spans.js";
import type { Gauges, Telemetry } from "./telemetry.js";

const NAME = "clustercode";

/** This package's version, the `service.version` of every export. */
const VERSION = (
  JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
    version: string;
  }
).version;

/**
 * The SDK's options: the resource names the service and its version, plus what `OTEL_SERVICE_NAME`
 * and `OTEL_RESOURCE_ATTRIBUTES` add. The process and host detectors stay off: the process one
 * exports the command line (`process.command_args`), which carries a brief's or a note's text.
 */
function sdkOptions(ids: PlannedIds): ConstructorParameters<typeof NodeSDK>[0] {
  return {
    idGenerator: ids,
    instrumentations: [],
    resource: resources.resourceFromAttributes({
      "service.name": NAME,
      "service.version": VERSION,
    }),
    resourceDetectors: [resources.envDetector],
  };
}

/** The trace id of a run, or of a delivery's webhook: the same in every process. */
function traceIdOf(name: string): string {
  return createHash("sha256").update(`trace/${name}`).digest("hex").slice(0, 32);
}

/** The span id of one span of a trace: the same in every process. */
function spanIdOf(trace: string, key: string): string {
  return createHash("sha256").update(`span/${trace}/${key}`).digest("hex").slice(0, 16);
}

/**
 * Ids the SDK asks for while a span starts: the next planned ones when a span's ids are derived
 * (a run's spans, which another process may continue), random ones otherwise.
 */
class PlannedIds {
  planned: { traceId: string; spanId: string } | undefined;
  generateTraceId(): string {
    return this.planned?.traceId ?? randomBytes(16).toString("hex");
  }
  generateSpanId(): string {
    return this.planned?.spanId ?? randomBytes(8).toString("hex");
  }
}

function spanContext(traceId: string, spanId: string): SpanContext {
  return { traceId, spanId, traceFlags: TraceFlags.SAMPLED, isRemote: true };
}

/** The counters and histograms runs and webhooks feed. */
function instrumentsOf(meter: Meter) {
  return {
    runsStarted: meter.createCounter("clustercode.runs.started", { description: "Runs started" }),
    runsEnded: meter.createCounter("clustercode.runs.ended", {
      description: "Runs ended, by outcome",
    }),
    spend: meter.createCounter("clustercode.spend", {
      unit: "USD",
      description: "Spend on agents and judges",
    }),
    tokens: meter.createCounter("clustercode.tokens", {
      description: "Tokens used, by engine and model",
    }),
    nodeDuration: meter.createHistogram("clustercode.node.duration", {
      unit: "ms",
      description: "Node visit durations",
    }),
    approvalWait: meter.createHistogram("clustercode.approval.wait", {
      unit: "ms",
      description: "Time approvals waited for an answer",
    }),
    webhookAck: meter.createHistogram("clustercode.webhook.ack", {
      unit: "ms",
      description: "Webhook acknowledgement latency",
    }),
  };
}

/**
 * OpenTelemetry through the official SDK, configured by the standard `OTEL_*` variables (the
 * exporter, its endpoint and protocol, the service name and resource attributes). Spans are
 * derived from each transition's evidence once the thing they time has ended, with ids derived
 * from the run id, so a run continued by another process stays one trace.
 */
class OpenTelemetry implements Telemetry {
  readonly #ids = new PlannedIds();
  readonly #sdk = new NodeSDK(sdkOptions(this.#ids));
  readonly #tracer;
  readonly #meter;
  readonly #instruments;
  /** What this process saw of each node visit in earlier evidence (bounded). */
  readonly #seen = new Map<string, SeenBefore>();

  constructor() {
    this.#sdk.start();
    this.#tracer = trace.getTracer(NAME);
    this.#meter = metrics.getMeter(NAME);
    this.#instruments = instrumentsOf(this.#meter);
  }

  observe(run: RunDocument, repo: string, effects: readonly Effect[]): void {
    const { runId } = run.definition;
    for (const effect of effects) {
      if (effect.type !== "evidence") continue;
      const { entry } = effect;
      if (entry.kind === "run.started") {
        this.#instruments.runsStarted.add(1, { workflow: run.definition.workflow.name });
      }
      const key = `${runId}/${String(entry.node)}`;
      for (const span of spansOf(run, repo, entry, this.#seen.get(key))) {
        this.#emit(span, runId);
        this.#count(run, span);
      }
      if (entry.kind === "loop.iteration") this.#remember(key, { iterationStart: entry.at });
      if (entry.kind === "command.dispatched" && typeof entry.harness === "string") {
        this.#remember(key, { harness: entry.harness });
      }
      if (entry.kind === "node.finished") this.#seen.delete(key);
    }
  }

  webhook(delivery: string, event: string, acknowledgedMs: number, recorded: boolean): void {
    const traceId = traceIdOf(delivery);
    const now = Date.now();
    this.#span({ traceId, spanId: spanIdOf(traceId, "webhook") }, ROOT_CONTEXT, {
      name: "clustercode.webhook",
      start: now - acknowledgedMs,
      end: now,
      attributes: {
        "github.delivery": delivery,
        "github.event": event,
        "clustercode.webhook.recorded": recorded,
      },
      links: [],
    });
    this.#instruments.webhookAck.record(acknowledgedMs, { event, recorded });
  }

  gauges(sources: Gauges): void {
    this.#meter
      .createObservableGauge("clustercode.intake.queue.depth", {
        description: "Deliveries waiting in the intake",
      })
      .addCallback((result) => result.observe(sources.intakeDepth()));
    this.#meter
      .createObservableGauge("clustercode.admission.queue.length", {
        description: "Runs queued by admission",
      })
      .addCallback(async (result) => result.observe(await sources.admissionQueue()));
  }

  async shutdown(): Promise<void> {
    await context.with(ROOT_CONTEXT, () => this.#sdk.shutdown());
  }

  #remember(key: string, update: SeenBefore): void {
    const merged = { ...this.#seen.get(key), ...update };
    this.#seen.delete(key);
    this.#seen.set(key, merged);
    if (this.#seen.size > 1000) this.#seen.delete(this.#seen.keys().next().value ?? "");
  }

  /** Exports a run's span under its derived ids, in its run's trace under its parent. */
  #emit(span: RunSpan, runId: string): void {
    const traceId = traceIdOf(runId);
    const parent =
      span.parent === undefined
        ? ROOT_CONTEXT
        : trace.setSpanContext(ROOT_CONTEXT, spanContext(traceId, spanIdOf(traceId, span.parent)));
    const delivery = span.delivery === undefined ? undefined : traceIdOf(span.delivery);
    const links: Link[] =
      delivery === undefined
        ? []
        : [{ context: spanContext(delivery, spanIdOf(delivery, "webhook")) }];
    this.#span({ traceId, spanId: spanIdOf(traceId, span.key) }, parent, { ...span, links });
  }

  /** Starts and ends a span with the ids given (the SDK asks the id generator for them). */
  #span(
    ids: { traceId: string; spanId: string },
    parent: Context,
    span: Pick<RunSpan, "name" | "start" | "end" | "attributes"> & { links: Link[] },
  ): void {
    this.#ids.planned = ids;
    try {
      this.#tracer
        .startSpan(
          span.name,
          { startTime: span.start, attributes: span.attributes, links: span.links },
          parent,
        )
        .end(span.end);
    } finally {
      this.#ids.planned = undefined;
    }
  }

  /** The metrics a finished span feeds. */
  #count(run: RunDocument, span: RunSpan): void {
    const attributes = span.attributes as Attributes;
    const outcome = String(attributes["clustercode.outcome"]);
    switch (span.name) {
      case "clustercode.command":
      case "clustercode.judge":
        this.#countSpend(attributes);
        break;
      case "clustercode.node":
        this.#instruments.nodeDuration.record(span.end - span.start, {
          kind: String(attributes["clustercode.node.kind"]),
          outcome,
        });
        break;
      case "clustercode.approval.wait":
        this.#instruments.approvalWait.record(span.end - span.start, { outcome });
        break;
      case "clustercode.run":
        this.#instruments.runsEnded.add(1, { outcome, workflow: run.definition.workflow.name });
        break;
    }
  }

  #countSpend(attributes: Attributes): void {
    const by = {
      engine: String(attributes["clustercode.engine"] ?? "judge"),
      model: String(attributes["clustercode.model"] ?? "unknown"),
    };
    const cost = attributes["clustercode.cost.usd"];
    if (typeof cost === "number" && cost > 0) this.#instruments.spend.add(cost, by);
    for (const kind of ["input", "output"]) {
      const value = attributes[`clustercode.tokens.${kind}`];
      if (typeof value === "number") this.#instruments.tokens.add(value, { ...by, kind });
    }
  }
}

/** Starts OpenTelemetry from the standard `OTEL_*` variables. */
export function startOpenTelemetry(): Telemetry {
  return new OpenTelemetry();
}
