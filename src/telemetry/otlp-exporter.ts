/**
 * A small OTLP/HTTP JSON exporter for spans (the OpenTelemetry protocol's
 * `POST /v1/traces` with `application/json`). Ours rather than the official SDK:
 * the handful of spans a run makes need no context manager, sampler or batch
 * processor, the SDK's packages would weigh on the compiled binary, and the
 * links across teammates go by mailbox message id, which we wire by hand anyway.
 */

export interface OtlpSettings {
  /** The full traces URL. */
  url: string;
  headers: Record<string, string>;
  timeoutMs: number;
  serviceName: string;
}

export interface OtlpAttribute {
  key: string;
  value: { stringValue: string } | { intValue: string } | { doubleValue: number } | { boolValue: boolean };
}

export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: OtlpAttribute[];
  status: { code: number; message?: string };
}

const DEFAULT_TIMEOUT_MS = 10_000;

/**
 * The exporter's settings from the standard variables, or undefined when
 * tracing is off: no OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT, OTEL_SDK_DISABLED=true
 * or OTEL_TRACES_EXPORTER=none.
 */
export function otlpSettings(env: Record<string, string | undefined>): OtlpSettings | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return undefined;
  if (env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === "none") return undefined;
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  // The per-signal variable is the URL as is; the general one gets the signal's path.
  const url = traces ? traces : base ? `${base.replace(/\/+$/, "")}/v1/traces` : undefined;
  if (url === undefined) return undefined;
  const timeout = Number(env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT ?? env.OTEL_EXPORTER_OTLP_TIMEOUT);
  return {
    url,
    headers: { ...parseHeaders(env.OTEL_EXPORTER_OTLP_HEADERS), ...parseHeaders(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS) },
    timeoutMs: Number.isFinite(timeout) && timeout > 0 ? timeout : DEFAULT_TIMEOUT_MS,
    serviceName: env.OTEL_SERVICE_NAME?.trim() || "agent",
  };
}

/** `key1=value1,key2=value2`, values percent-encoded (the OTLP exporter spec's format). */
function parseHeaders(text: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (text ?? "").split(",")) {
    const at = pair.indexOf("=");
    if (at <= 0) continue;
    try {
      headers[pair.slice(0, at).trim()] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      headers[pair.slice(0, at).trim()] = pair.slice(at + 1).trim();
    }
  }
  return headers;
}

/** Posts spans; a failure is reported through `onError`, never thrown: tracing must not fail a run. */
export class OtlpExporter {
  readonly #settings: OtlpSettings;
  readonly #version: string;
  readonly #onError: (message: string) => void;

  constructor(settings: OtlpSettings, version: string, onError: (message: string) => void) {
    this.#settings = settings;
    this.#version = version;
    this.#onError = onError;
  }

  async export(spans: OtlpSpan[]): Promise<void> {
    if (spans.length === 0) return;
    const body = {
      resourceSpans: [
        {
          resource: {
            attributes: [
              { key: "service.name", value: { stringValue: this.#settings.serviceName } },
              { key: "service.version", value: { stringValue: this.#version } },
            ],
          },
          scopeSpans: [{ scope: { name: "agent", version: this.#version }, spans }],
        },
      ],
    };
    try {
      const response = await fetch(this.#settings.url, {
        method: "POST",
        headers: { "content-type": "application/json", ...this.#settings.headers },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.#settings.timeoutMs),
      });
      if (!response.ok) this.#onError(`OTLP export to ${this.#settings.url} answered HTTP ${response.status}; ${spans.length} span(s) dropped`);
      await response.body?.cancel();
    } catch (error) {
      this.#onError(`OTLP export to ${this.#settings.url} failed (${(error as Error).message}); ${spans.length} span(s) dropped`);
    }
  }
}
