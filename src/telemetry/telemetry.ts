import type { Effect, RunDefinition, RunSnapshot } from "../engine/model.js";

/** A run as telemetry reads it (the runtime's run document). */
export interface RunDocument {
  definition: RunDefinition;
  state: RunSnapshot;
}

/** What the app reads for its gauges. */
export interface Gauges {
  /** Deliveries recorded and waiting to be handled in this process. */
  intakeDepth(): number;
  /** Runs waiting in admission queues. */
  admissionQueue(): Promise<number>;
}

/** Where runs, webhooks and queues are reported: OpenTelemetry, or nowhere. */
export interface Telemetry {
  /** After every applied transition: the spans and counts its evidence closes. */
  observe(run: RunDocument, repo: string, effects: readonly Effect[]): void;
  /** A webhook delivery acknowledged after `acknowledgedMs`; whether it was recorded. */
  webhook(delivery: string, event: string, acknowledgedMs: number, recorded: boolean): void;
  /** Registers the app's queue gauges. */
  gauges(sources: Gauges): void;
  /** Exports what is pending and stops. */
  shutdown(): Promise<void>;
}

/** Telemetry that reports nothing: what a process gets with no `OTEL_*` variable set. */
export const NO_TELEMETRY: Telemetry = {
  observe: () => undefined,
  webhook: () => undefined,
  gauges: () => undefined,
  shutdown: () => Promise.resolve(),
};

/** The standard variables that turn telemetry on (any of them set, to anything but "none"). */
const SWITCHES =
  /^OTEL_(EXPORTER_OTLP_\w+|SERVICE_NAME|RESOURCE_ATTRIBUTES|TRACES_EXPORTER|METRICS_EXPORTER)$/;

/** Whether the environment asks for telemetry. */
export function telemetryWanted(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED === "true") return false;
  return Object.entries(env).some(
    ([name, value]) =>
      SWITCHES.test(name) && value !== undefined && value !== "" && value !== "none",
  );
}

/**
 * Starts OpenTelemetry when the environment asks for it, loading the SDK only then: with no
 * `OTEL_*` variable set a process loads none of it and exports nothing.
 */
export async function openTelemetry(env: NodeJS.ProcessEnv): Promise<Telemetry> {
  if (!telemetryWanted(env)) return NO_TELEMETRY;
  const { startOpenTelemetry } = await import("./otel.js");
  return startOpenTelemetry();
}
