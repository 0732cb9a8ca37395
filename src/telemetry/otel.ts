import { createHash, randomBytes } from "node:crypto";
import {
  context,
  metrics,
  ROOT_CONTEXT,
  trace,
  TraceFlags,
  type Attributes,
  type Link,
  type SpanContext,
} from "@opentelemetry/api";
import { NodeSDK } from "@opentelemetry/sdk-node";
import type { Effect } from "../engine/model.js";
import { spansOf, type RunSpan, type SeenBefore } from "./run-spans.js";
import type { Gauges, RunDocument, Telemetry } from "./telemetry.js";

const NAME = "clustercode";

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

/**
 * OpenTelemetry through the official SDK, configured by the standard `OTEL_*` variables (the
 * exporter, its endpoint and protocol, the service name and resource attributes). Spans are
 * derived from each transition's evidence once the thing they time has ended, with ids derived
 * from the run id, so a run continued by another process stays one trace.
 */
export function startOpenTelemetry(): Telemetry {
  const ids = new PlannedIds();
  const sdk = new NodeSDK({ idGenerator: ids, instrumentations: [] });
  sdk.start();
  const tracer = trace.getTracer(NAME);
  const meter = metrics.getMeter(NAME);
  const instruments = {
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
  /** What this process saw of each node visit in earlier evidence (bounded). */
  const seen = new Map<string, SeenBefore>();
  const remember = (key: string, update: SeenBefore) => {
    const merged = { ...seen.get(key), ...update };
    seen.delete(key);
    seen.set(key, merged);
    if (seen.size > 1000) seen.delete(seen.keys().next().value ?? "");
  };

  const emit = (span: RunSpan, runId: string) => {
    const traceId = traceIdOf(runId);
    const parent =
      span.parent === undefined
        ? ROOT_CONTEXT
        : trace.setSpanContext(ROOT_CONTEXT, spanContext(traceId, spanIdOf(traceId, span.parent)));
    const links: Link[] =
      span.delivery === undefined
        ? []
        : [
            {
              context: spanContext(
                traceIdOf(span.delivery),
                spanIdOf(traceIdOf(span.delivery), "webhook"),
              ),
            },
          ];
    ids.planned = { traceId, spanId: spanIdOf(traceId, span.key) };
    try {
      tracer
        .startSpan(span.name, { startTime: span.start, attributes: span.attributes, links }, parent)
        .end(span.end);
    } finally {
      ids.planned = undefined;
    }
  };

  const count = (run: RunDocument, span: RunSpan) => {
    const attributes = span.attributes as Attributes;
    const cost = attributes["clustercode.cost.usd"];
    const by = {
      engine: String(attributes["clustercode.engine"] ?? "judge"),
      model: String(attributes["clustercode.model"] ?? "unknown"),
    };
    if (span.name === "clustercode.command" || span.name === "clustercode.judge") {
      if (typeof cost === "number" && cost > 0) instruments.spend.add(cost, by);
      for (const kind of ["input", "output"]) {
        const value = attributes[`clustercode.tokens.${kind}`];
        if (typeof value === "number") instruments.tokens.add(value, { ...by, kind });
      }
    }
    if (span.name === "clustercode.node") {
      instruments.nodeDuration.record(span.end - span.start, {
        kind: String(attributes["clustercode.node.kind"]),
        outcome: String(attributes["clustercode.outcome"]),
      });
    }
    if (span.name === "clustercode.approval.wait") {
      instruments.approvalWait.record(span.end - span.start, {
        outcome: String(attributes["clustercode.outcome"]),
      });
    }
    if (span.name === "clustercode.run") {
      instruments.runsEnded.add(1, {
        outcome: String(attributes["clustercode.outcome"]),
        workflow: run.definition.workflow.name,
      });
    }
  };

  return {
    observe(run, repo, effects: readonly Effect[]) {
      const { runId } = run.definition;
      for (const effect of effects) {
        if (effect.type !== "evidence") continue;
        const { entry } = effect;
        if (entry.kind === "run.started") {
          instruments.runsStarted.add(1, { workflow: run.definition.workflow.name });
        }
        const key = `${runId}/${String(entry.node)}`;
        for (const span of spansOf(run, repo, entry, seen.get(key))) {
          emit(span, runId);
          count(run, span);
        }
        if (entry.kind === "loop.iteration") remember(key, { iterationStart: entry.at });
        if (entry.kind === "command.dispatched" && typeof entry.harness === "string") {
          remember(key, { harness: entry.harness });
        }
        if (entry.kind === "node.finished") seen.delete(key);
      }
    },
    webhook(delivery, event, acknowledgedMs, recorded) {
      const traceId = traceIdOf(delivery);
      const now = Date.now();
      ids.planned = { traceId, spanId: spanIdOf(traceId, "webhook") };
      try {
        tracer
          .startSpan(
            "clustercode.webhook",
            {
              startTime: now - acknowledgedMs,
              attributes: {
                "github.delivery": delivery,
                "github.event": event,
                "clustercode.webhook.recorded": recorded,
              },
            },
            ROOT_CONTEXT,
          )
          .end(now);
      } finally {
        ids.planned = undefined;
      }
      instruments.webhookAck.record(acknowledgedMs, { event, recorded });
    },
    gauges(sources: Gauges) {
      meter
        .createObservableGauge("clustercode.intake.queue.depth", {
          description: "Deliveries waiting in the intake",
        })
        .addCallback((result) => result.observe(sources.intakeDepth()));
      meter
        .createObservableGauge("clustercode.admission.queue.length", {
          description: "Runs queued by admission",
        })
        .addCallback(async (result) => result.observe(await sources.admissionQueue()));
    },
    async shutdown() {
      await context.with(ROOT_CONTEXT, () => sdk.shutdown());
    },
  };
}
