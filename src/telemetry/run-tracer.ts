import type { Usage } from "../model/types.ts";
import { redact } from "../security/redact.ts";
import type { RunEvent, RunResult } from "../runtime/run-types.ts";
import type { TeamEvent } from "../team/teammate-runtime.ts";
import type { OtlpAttribute, OtlpExporter, OtlpSpan } from "./otlp-exporter.ts";

type AttributeValue = string | number | boolean;

interface OpenSpan {
  spanId: string;
  parentSpanId?: string;
  name: string;
  startNs: bigint;
  attributes: Record<string, AttributeValue>;
  error?: string;
}

/** Spans are sent in batches of this many while the run goes on, the rest at the end. */
const BATCH = 256;
const SPAN_KIND_INTERNAL = 1;
const SPAN_KIND_CLIENT = 3;

/**
 * One trace per command: a root span, a span per agent turn, model call, tool
 * call and mailbox transition. Links across agents go by message id: a
 * teammate's turn (its key is the id of the message it answers) is the child of
 * the `mailbox send` span of that message, which is the child of the tool call
 * (spawn_teammate, send_message) or turn that sent it; the Lead's event turn for
 * a teammate's result hangs under the send of that result the same way.
 */
export class RunTracer {
  readonly traceId = randomHex(16);
  readonly #exporter: OtlpExporter;
  readonly #root: OpenSpan;
  readonly #turns = new Map<string, OpenSpan>();
  readonly #lastTurns = new Map<string, OpenSpan>();
  readonly #tools = new Map<string, OpenSpan>();
  readonly #models = new Map<string, OpenSpan>();
  /**
   * Model calls begun before their agent had a turn (a new teammate's first
   * request, sent ahead while its spawn is stored: see AheadCall), with their
   * end once they ended: each goes under the agent's next turn, which takes it.
   */
  readonly #early = new Map<string, { span: OpenSpan; ended?: { error: string | undefined; endNs: bigint } }>();
  /** Message id → the span of its send. */
  readonly #sends = new Map<string, string>();
  #finished: OtlpSpan[] = [];
  readonly #exports: Promise<void>[] = [];

  constructor(exporter: OtlpExporter, root: { name: string; attributes: Record<string, AttributeValue> }) {
    this.#exporter = exporter;
    this.#root = this.#open(root.name, undefined, root.attributes);
  }

  turnStarted(identity: string, key: string): void {
    const parent = this.#sends.get(key) ?? (identity.includes("/") ? this.#runningTool(parentOf(identity))?.spanId : undefined) ?? this.#root.spanId;
    const turn = this.#open(`turn ${identity}`, parent, { "agent.name": identity, "agent.turn.key": key });
    this.#turns.set(identity, turn);
    const early = this.#early.get(identity);
    if (!early) return;
    this.#early.delete(identity);
    early.span.parentSpanId = turn.spanId;
    if (early.ended) this.#close(early.span, early.ended.error, SPAN_KIND_CLIENT, early.ended.endNs);
  }

  turnEnded(identity: string, result: RunResult): void {
    const span = this.#turns.get(identity);
    if (!span) return;
    this.#turns.delete(identity);
    this.#lastTurns.set(identity, span);
    span.attributes["agent.turn.subtype"] = result.subtype;
    span.attributes["agent.turn.model_calls"] = result.turns;
    this.#close(span, result.isError ? result.result : undefined);
  }

  /** A model call about to start; the returned function ends its span. */
  modelCall(identity: string, model: string): (outcome: { usage?: Usage; error?: unknown }) => void {
    const turn = this.#turns.get(identity);
    const span = this.#open(`chat ${model}`, turn?.spanId ?? this.#root.spanId, {
      "agent.name": identity,
      "gen_ai.operation.name": "chat",
      "gen_ai.request.model": model,
      "gen_ai.model.retries": 0,
    });
    this.#models.set(identity, span);
    if (!turn) this.#early.set(identity, { span });
    return ({ usage, error }) => {
      if (this.#models.get(identity) === span) this.#models.delete(identity);
      if (usage) {
        span.attributes["gen_ai.usage.input_tokens"] = usage.inputTokens;
        span.attributes["gen_ai.usage.output_tokens"] = usage.outputTokens;
        if (usage.cachedInputTokens !== undefined) span.attributes["gen_ai.usage.cached_input_tokens"] = usage.cachedInputTokens;
      }
      const message = error === undefined ? undefined : (error as Error).message;
      const early = this.#early.get(identity);
      // Ended before the turn that takes it began: sent with that turn as its parent.
      if (early?.span === span) early.ended = { error: message, endNs: nowNs() };
      else this.#close(span, message, SPAN_KIND_CLIENT);
    };
  }

  readonly observe = (event: RunEvent): void => {
    if (event.type === "tool_call") {
      const span = this.#open(`tool ${event.name}`, this.#turns.get(event.agent)?.spanId ?? this.#root.spanId, {
        "agent.name": event.agent,
        "tool.name": event.name,
        "tool.call_id": event.id,
      });
      this.#tools.set(event.id, span);
    } else if (event.type === "tool_result") {
      const span = this.#tools.get(event.id);
      if (!span) return;
      this.#tools.delete(event.id);
      span.attributes["tool.is_error"] = event.isError;
      this.#close(span, event.isError ? clipped(event.content) : undefined);
    } else if (event.type === "model_retry") {
      const span = this.#models.get(event.agent);
      if (span) span.attributes["gen_ai.model.retries"] = event.attempt;
    }
  };

  /**
   * The call an agent is running now: its tools run one at a time in the order
   * the model asked for them, so it is the oldest of its calls without a result.
   */
  #runningTool(agent: string): OpenSpan | undefined {
    for (const span of this.#tools.values()) if (span.attributes["agent.name"] === agent) return span;
    return undefined;
  }

  /** The tool a call found: its effect (read, edit, execute, coordinate). */
  toolFound(callId: string, effect: string): void {
    const span = this.#tools.get(callId);
    if (span) span.attributes["tool.effect"] = effect;
  }

  denied(agent: string, tool: string, reason: string): void {
    const span = this.#runningTool(agent);
    if (!span || span.attributes["tool.name"] !== tool) return;
    span.attributes["tool.denied"] = true;
    span.attributes["tool.denied_reason"] = clipped(reason);
  }

  readonly observeTeam = (event: TeamEvent): void => {
    if (event.type !== "mailbox") return;
    // The sender's running tool call, else its turn (a result is sent after the turn ends).
    const actor = event.op === "send" ? event.from : event.agent;
    const parent =
      (event.op === "send" ? this.#runningTool(actor) : undefined) ?? this.#turns.get(actor) ?? this.#lastTurns.get(actor) ?? this.#root;
    const span = this.#open(`mailbox ${event.op}`, parent.spanId, {
      "messaging.operation": event.op,
      "messaging.message.id": event.id,
      "messaging.destination.name": event.agent,
      "messaging.source": event.from,
      "messaging.message.kind": event.kind,
    });
    if (event.op === "send") this.#sends.set(event.id, span.spanId);
    this.#close(span, undefined);
  };

  /** Ends what is still open (a stopped run's turns), then the root, and sends everything. */
  async close(result?: RunResult): Promise<void> {
    // A call made ahead that no turn took: under the root, as it began.
    for (const { span, ended } of this.#early.values()) {
      this.#models.delete(span.attributes["agent.name"] as string);
      this.#close(span, ended ? ended.error : "not finished when the run stopped", SPAN_KIND_CLIENT, ended?.endNs);
    }
    this.#early.clear();
    for (const span of [...this.#models.values(), ...this.#tools.values(), ...this.#turns.values()]) this.#close(span, "not finished when the run stopped");
    this.#models.clear();
    this.#tools.clear();
    this.#turns.clear();
    if (result) this.#root.attributes["agent.run.subtype"] = result.subtype;
    this.#close(this.#root, result?.isError ? clipped(result.result) : undefined);
    this.#flush();
    await Promise.all(this.#exports);
  }

  #open(name: string, parentSpanId: string | undefined, attributes: Record<string, AttributeValue>): OpenSpan {
    return { spanId: randomHex(8), ...(parentSpanId ? { parentSpanId } : {}), name, startNs: nowNs(), attributes };
  }

  #close(span: OpenSpan, error: string | undefined, kind = SPAN_KIND_INTERNAL, endNs = nowNs()): void {
    this.#finished.push({
      traceId: this.traceId,
      spanId: span.spanId,
      ...(span.parentSpanId ? { parentSpanId: span.parentSpanId } : {}),
      // Spans leave the process: an endpoint's error that echoes the key, a denial
      // reason quoting a command, go to the collector masked like stdout.
      name: redact(span.name),
      kind,
      startTimeUnixNano: span.startNs.toString(),
      endTimeUnixNano: endNs.toString(),
      attributes: Object.entries(span.attributes).map(([key, value]) => ({ key, value: attributeValue(typeof value === "string" ? redact(value) : value) })),
      status: error === undefined ? { code: 0 } : { code: 2, message: redact(error) },
    });
    if (this.#finished.length >= BATCH) this.#flush();
  }

  #flush(): void {
    const spans = this.#finished;
    this.#finished = [];
    if (spans.length > 0) this.#exports.push(this.#exporter.export(spans));
  }
}

function parentOf(identity: string): string {
  return identity.split("/")[0] || identity;
}

function attributeValue(value: AttributeValue): OtlpAttribute["value"] {
  if (typeof value === "boolean") return { boolValue: value };
  if (typeof value === "number") return Number.isInteger(value) ? { intValue: String(value) } : { doubleValue: value };
  return { stringValue: value };
}

function clipped(text: string): string {
  return text.length <= 300 ? text : `${text.slice(0, 299)}…`;
}

function randomHex(bytes: number): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString("hex");
}

/** Wall-clock time in nanoseconds, with the monotonic clock's sub-millisecond part. */
function nowNs(): bigint {
  return BigInt(Math.round((performance.timeOrigin + performance.now()) * 1000)) * 1000n;
}
