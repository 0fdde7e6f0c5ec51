import { OtlpExporter, otlpSettings } from "../../telemetry/otlp-exporter.ts";
import type { RunTracer } from "../../telemetry/run-tracer.ts";
import { VERSION } from "../version.ts";

/**
 * The command's tracer when OTEL_EXPORTER_OTLP_ENDPOINT (or the traces one) is
 * set, else undefined — and then nothing of it is even loaded.
 */
export async function startTracing(
  name: string,
  attributes: Record<string, string | number | boolean>,
  onError: (message: string) => void,
): Promise<RunTracer | undefined> {
  const settings = otlpSettings(process.env);
  if (settings === undefined) return undefined;
  const { RunTracer } = await import("../../telemetry/run-tracer.ts");
  return new RunTracer(new OtlpExporter(settings, VERSION, onError), { name, attributes });
}
