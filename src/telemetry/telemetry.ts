import type { Effect, RunDocument } from "../engine/model.js";

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
