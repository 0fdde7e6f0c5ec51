import { oneLine } from "./wire-completion.ts";

/**
 * An endpoint's error, whatever shape its body had: OpenAI's `{"error":{…}}`,
 * Gemini's array of those, the flat `{"object":"error","message":…}` of Mistral,
 * vLLM and SGLang, FastAPI's `{"detail":…}`, a bare `{"error":"text"}`, or plain
 * text. Read by shape, not by provider: gateways pass their upstream's body on.
 */
export interface ProviderError {
  /** The provider's own words, on one line (empty when it said nothing). */
  message: string;
  code?: string;
  type?: string;
  param?: string;
  /** A number the body gives as its code (Gemini's, vLLM's, OpenRouter's `"code": 502`). */
  numericCode?: number;
  /** Google's status name (`INVALID_ARGUMENT`, `RESOURCE_EXHAUSTED`, `UNAUTHENTICATED`). */
  status?: string;
  /** Google's ErrorInfo reason (`API_KEY_INVALID`). */
  reason?: string;
  /** Google's RetryInfo `retryDelay`, in ms. */
  retryAfterMs?: number;
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);
const text = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined);

/** The error in a body's text; plain text (a proxy's "Bad Gateway") is its own message. */
export function parseErrorText(body: string): ProviderError {
  try {
    return parseErrorBody(JSON.parse(body)) ?? { message: oneLine(body) };
  } catch {
    return { message: oneLine(body.replace(/<[^>]*>/g, " ")) };
  }
}

/** The error in a parsed body; undefined when nothing in it looks like one. */
export function parseErrorBody(body: unknown): ProviderError | undefined {
  if (Array.isArray(body)) return body.length > 0 ? parseErrorBody(body[0]) : undefined;
  if (!isObject(body)) return typeof body === "string" && body !== "" ? { message: oneLine(body) } : undefined;
  const inner = body.error;
  if (isObject(inner)) return fromObject(inner, body);
  if (typeof inner === "string") return fromObject({ ...body, message: inner });
  if (body.object === "error" || "message" in body || "detail" in body) return fromObject(body);
  return undefined;
}

function fromObject(error: Json, outer: Json = {}): ProviderError {
  const nested = nestedError(error.message);
  // The inner error says what went wrong; the outer one only that something did.
  if (nested) return { ...fromObject({ ...error, message: nested.message }, outer), ...nested };
  const details = Array.isArray(error.details) ? error.details.filter(isObject) : [];
  const reason = details.map((detail) => text(detail.reason)).find((found) => found !== undefined);
  const delay = details.map((detail) => text(detail.retryDelay)).find((found) => found !== undefined);
  const code = error.code ?? outer.code;
  const out: ProviderError = { message: oneLine(describe(error.message) ?? describe(error.detail) ?? describe(outer.message) ?? "") };
  if (typeof code === "string" && code !== "") out.code = code;
  if (typeof code === "number") out.numericCode = code;
  const type = text(error.type) ?? text(outer.type);
  if (type) out.type = type;
  const param = text(error.param);
  if (param) out.param = param;
  const status = text(error.status);
  if (status) out.status = status;
  if (reason) out.reason = reason;
  const seconds = delay ? /^(\d+(?:\.\d+)?)s$/.exec(delay)?.[1] : undefined;
  if (seconds !== undefined) out.retryAfterMs = Number(seconds) * 1000;
  return out;
}

/**
 * An error whose message is another error's JSON: Google's own error, passed
 * on as a string by Gemini's OpenAI-compatible endpoint and by gateways
 * (`{"error":{"message":"{\n  \"error\": {… \"reason\": \"API_KEY_INVALID\" …}}","code":400}}`).
 */
function nestedError(message: unknown): ProviderError | undefined {
  if (typeof message !== "string" || !/^\s*[[{]/.test(message)) return undefined;
  try {
    const inner: unknown = JSON.parse(message);
    return (isObject(inner) && inner.error !== undefined) || Array.isArray(inner) ? parseErrorBody(inner) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A message that may be text, or a validation report: FastAPI's `detail` list
 * (`[{"loc":["body","stream_options"],"msg":"Extra inputs are not permitted"}]`),
 * which Mistral nests inside `message`.
 */
function describe(value: unknown): string | undefined {
  if (typeof value === "string") return value === "" ? undefined : value;
  if (Array.isArray(value)) {
    const parts = value.map(describe).filter((part): part is string => part !== undefined);
    return parts.length > 0 ? parts.join("; ") : undefined;
  }
  if (!isObject(value)) return undefined;
  if ("detail" in value) return describe(value.detail);
  const said = text(value.msg) ?? text(value.message);
  if (said === undefined) return undefined;
  const loc = Array.isArray(value.loc) ? value.loc.filter((part) => part !== "body").join(".") : "";
  return loc ? `${loc}: ${said}` : said;
}

/** A ProviderError back from JSON (errorShapingFetch's body, as the SDK hands it on); undefined for anything else. */
export function providerErrorFrom(value: unknown): ProviderError | undefined {
  if (!isObject(value) || typeof value.message !== "string") return undefined;
  const out: ProviderError = { message: value.message };
  for (const key of ["code", "type", "param", "status", "reason"] as const) {
    const field = value[key];
    if (typeof field === "string") out[key] = field;
  }
  if (typeof value.numericCode === "number") out.numericCode = value.numericCode;
  if (typeof value.retryAfterMs === "number") out.retryAfterMs = value.retryAfterMs;
  return out;
}
