import { oneOf, text } from "../kinds.js";
import { optional, type SettingGroup } from "../setting.js";

const ALL = ["app", "cli"] as const;

/** OpenTelemetry's standard variables: any of them set turns telemetry on. */
export const telemetry = {
  title: "Telemetry",
  about:
    "Traces and metrics go through OpenTelemetry, configured by its standard variables only: off, and not even loaded, when none of these is set (or each is `none`). The SDK reads the rest of its `OTEL_*` variables itself.",
  settings: {
    endpoint: optional("OTEL_EXPORTER_OTLP_ENDPOINT", text(), {
      description:
        "The collector, e.g. `http://localhost:4318` (traces go to `/v1/traces`, metrics to `/v1/metrics`).",
      readers: ALL,
    }),
    tracesEndpoint: optional("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", text(), {
      description: "The traces' full URL.",
      readers: ALL,
    }),
    metricsEndpoint: optional("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", text(), {
      description: "The metrics' full URL.",
      readers: ALL,
    }),
    protocol: optional("OTEL_EXPORTER_OTLP_PROTOCOL", text(), {
      description: "`http/protobuf` (default), `http/json` or `grpc`.",
      readers: ALL,
    }),
    headers: optional("OTEL_EXPORTER_OTLP_HEADERS", text(), {
      description: "Headers for the collector, e.g. an API key for a hosted one.",
      readers: ALL,
      secret: true,
    }),
    serviceName: optional("OTEL_SERVICE_NAME", text(), {
      description: "How the process is named in your backend (default `clustercode`).",
      readers: ALL,
    }),
    resourceAttributes: optional("OTEL_RESOURCE_ATTRIBUTES", text(), {
      description: "More resource attributes, `key=value,…`.",
      readers: ALL,
    }),
    tracesExporter: optional("OTEL_TRACES_EXPORTER", text(), {
      description: "`otlp` (default), `console` or `none`.",
      readers: ALL,
    }),
    metricsExporter: optional("OTEL_METRICS_EXPORTER", text(), {
      description: "`otlp` (default), `console` or `none`.",
      readers: ALL,
    }),
    sdkDisabled: optional("OTEL_SDK_DISABLED", oneOf(["true", "false"]), {
      description: "`true` turns telemetry off whatever else is set.",
      readers: ALL,
    }),
  },
} satisfies SettingGroup;
