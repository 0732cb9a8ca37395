import { NO_TELEMETRY, type Telemetry } from "./telemetry.js";

/** The standard variables that turn telemetry on (any of them set, to anything but "none"). */
const SWITCHES =
  /^OTEL_(EXPORTER_OTLP_\w+|SERVICE_NAME|RESOURCE_ATTRIBUTES|TRACES_EXPORTER|METRICS_EXPORTER)$/;

/** Whether the environment asks for telemetry. */
function telemetryWanted(env: NodeJS.ProcessEnv): boolean {
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
