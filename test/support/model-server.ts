/**
 * A scripted OpenAI-compatible chat-completions server on 127.0.0.1 (port 0),
 * standing in for the model API in tests. It answers each request with the next
 * scripted reply (for replies bound to an identity, the next one for the agent
 * named in the request's X-Agent-Name header) and records every request.
 *
 * `assertDone()` fails the test when the server was called more or fewer times
 * than scripted: a surplus request gets HTTP 500 and is counted. With a
 * `respond` function, a request no scripted reply is left for is answered by
 * it instead: for crash tests, where a killed run and the resume that follows
 * may repeat any request any number of times.
 *
 * A request with `stream: true` is answered as the API streams: server-sent
 * `chat.completion.chunk` events (text by words, tool-call arguments in pieces,
 * the usage in a last chunk when `stream_options.include_usage` asks for it),
 * then `data: [DONE]`. A reply can cut that stream, hold it half-sent until the
 * test says go, or answer with raw bytes instead (how the Anthropic Messages and
 * Responses streams posted to /messages and /responses are scripted).
 */
import type { Server } from "bun";
import { AnthropicStrictMock } from "./anthropic-strict.ts";
import { ResponsesStrictMock } from "./responses-strict.ts";

export interface ScriptedToolCall {
  name: string;
  /** An object is JSON-encoded; a string is sent as is (so a test can send malformed JSON). */
  arguments: string | Record<string, unknown>;
  id?: string;
}

export interface ScriptedReply {
  /** Only a request from this agent (X-Agent-Name) takes this reply. */
  identity?: string;
  /** Assistant text. */
  text?: string | null;
  /** Reasoning sent before the text as DeepSeek does: `reasoning_content` in the message, streamed a word a chunk. */
  reasoning?: string;
  toolCalls?: ScriptedToolCall[];
  finishReason?: "stop" | "tool_calls" | "length" | "content_filter";
  /** What the answer reports it used (10 in, 5 out when absent); `cached_tokens` becomes `prompt_tokens_details`. */
  usage?: { prompt_tokens: number; completion_tokens: number; cached_tokens?: number };
  /** A raw HTTP answer instead of a completion: e.g. 429 with Retry-After, 500, 400 context overflow. */
  status?: number;
  headers?: Record<string, string>;
  body?: unknown;
  /** Wait this long before answering. */
  delayMs?: number;
  /**
   * For a streamed answer: the pause between chunk events, 1 ms when absent; 0
   * sends them back to back (a benchmark whose model time is `delayMs` alone:
   * 32 tool calls are some 130 chunks, 130+ ms of pauses otherwise).
   */
  paceMs?: number;
  /**
   * Answer only once this settles: a barrier between requests (e.g. both
   * teammates' requests arrive before either is answered), instead of a clock.
   */
  gate?: Promise<unknown>;
  /** Runs on the request before answering; a throw is reported by assertDone. */
  check?: (request: RecordedRequest) => void;
  /** A raw body with this content type (and `status`, 200 when absent): HTML from a wrong URL, a broken stream. */
  raw?: { contentType: string; body: string };
  /**
   * For a streamed answer: stop after this many chunk events, before the one
   * with `finish_reason`, and end the response there (no [DONE]). A connection
   * reset in the middle of a body is socket-server.ts's "sse-reset".
   */
  cut?: { afterChunks: number };
  /** For a streamed answer: send this many chunk events, then wait for `until` before the rest. */
  hold?: { afterChunks: number; until: Promise<unknown> };
}

export interface RecordedRequest {
  identity: string | undefined;
  /** The path and query it was posted to. */
  url: string;
  headers: Record<string, string>;
  body: {
    model: string;
    messages: Array<Record<string, unknown>>;
    tools?: Array<{ type: string; function: { name: string; description?: string; parameters?: unknown } }>;
    [key: string]: unknown;
  };
  /** When it arrived (ms since epoch). */
  at: number;
  /**
   * Settles when the client closed the connection before the answer was done
   * (an aborted call): what a test waits on to see an abort, never a clock.
   */
  disconnected?: Promise<void>;
}

export interface ScriptedModelServerOptions {
  /**
   * Computes the reply to a request no scripted reply matches, from the request
   * itself (so a repeat gets the same answer). A throw is recorded in `problems`
   * and answered with HTTP 500.
   */
  respond?: (request: RecordedRequest) => ScriptedReply;
  /** `GET /models` lists these ids (`agent doctor`); without it that route is a 404 like any other. */
  models?: string[];
  /** With `models`: the key `GET /models` requires, as a bearer token or `x-api-key` (401 for any other or none). */
  apiKey?: string;
  /**
   * Judge requests posted to `/messages` and `/responses` by the Messages and
   * Responses APIs' own rules and answer a breach with its HTTP 400
   * (test/support/anthropic-strict.ts, responses-strict.ts), as the API does.
   * On unless `false`: a test that sends a bad request on purpose says so.
   */
  strict?: boolean;
}

export class ScriptedModelServer {
  readonly requests: RecordedRequest[] = [];
  readonly problems: string[] = [];
  readonly #script: ScriptedReply[];
  readonly #respond: ScriptedModelServerOptions["respond"];
  readonly #options: ScriptedModelServerOptions;
  /** `GET /models` requests answered. */
  modelListRequests = 0;
  readonly #server: Server<undefined>;
  #completionCounter = 0;
  readonly #anthropic = new AnthropicStrictMock();
  readonly #responses = new ResponsesStrictMock();

  private constructor(script: ScriptedReply[], options: ScriptedModelServerOptions) {
    this.#script = [...script];
    this.#respond = options.respond;
    this.#options = options;
    this.#server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: (request) => this.#answer(request),
    });
  }

  static start(script: ScriptedReply[] = [], options: ScriptedModelServerOptions = {}): ScriptedModelServer {
    return new ScriptedModelServer(script, options);
  }

  /** Base URL to give the OpenAI SDK (`--base-url`). */
  get url(): string {
    return `http://127.0.0.1:${this.#server.port}/v1`;
  }

  /** Adds replies to the end of the script. */
  push(...replies: ScriptedReply[]): void {
    this.#script.push(...replies);
  }

  /** Replies not used yet. */
  get remaining(): number {
    return this.#script.length;
  }

  /** Throws when a reply was not used, a request had no reply, or a `check` failed. */
  assertDone(): void {
    const problems = [...this.problems];
    if (this.#script.length > 0) problems.push(`${this.#script.length} scripted repl(ies) never requested`);
    if (problems.length > 0) throw new Error(`scripted model server: ${problems.join("; ")}`);
  }

  async close(): Promise<void> {
    await this.#server.stop(true);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async #answer(request: Request): Promise<Response> {
    const path = new URL(request.url).pathname;
    if (request.method === "GET" && path === "/v1/models" && this.#options.models) return this.#modelList(request);
    // Anthropic's /v1/messages and OpenAI's /responses too: their answers are scripted as `raw` event streams.
    if (request.method !== "POST" || !/\/(chat\/completions|messages|responses)$/.test(path)) {
      this.problems.push(`unexpected ${request.method} ${path}`);
      return Response.json({ error: { message: `no route ${path}` } }, { status: 404 });
    }
    const headers = Object.fromEntries(request.headers.entries());
    const gone = Promise.withResolvers<void>();
    request.signal.addEventListener("abort", () => gone.resolve(), { once: true });
    const recorded: RecordedRequest = {
      identity: headers["x-agent-name"],
      url: path + new URL(request.url).search,
      headers,
      body: (await request.json()) as RecordedRequest["body"],
      at: Date.now(),
      disconnected: gone.promise,
    };
    this.requests.push(recorded);
    const strictMock = this.#options.strict === false ? undefined : path.endsWith("/messages") ? this.#anthropic : path.endsWith("/responses") ? this.#responses : undefined;
    const judged = strictMock?.judge(recorded.body);
    if (judged) {
      // Answered as the API would, and failed in assertDone: no scripted reply is used up.
      this.problems.push(`request #${this.requests.length} breaks the API rule ${judged.breach.rule}: ${judged.breach.message}`);
      return judged.response;
    }
    const reply = this.#nextReply(recorded);
    if (!reply) return Response.json({ error: { message: "no scripted reply left", type: "server_error" } }, { status: 500 });
    try {
      reply.check?.(recorded);
    } catch (error) {
      this.problems.push(`check of request #${this.requests.length} failed: ${(error as Error).message}`);
    }
    if (reply.delayMs) await Bun.sleep(reply.delayMs);
    if (reply.gate) await reply.gate;
    if (reply.raw !== undefined) {
      strictMock?.sent(reply.raw);
      return new Response(reply.raw.body, { status: reply.status ?? 200, headers: { ...reply.headers, "content-type": reply.raw.contentType } });
    }
    if (reply.status !== undefined) {
      return Response.json(reply.body ?? { error: { message: `scripted ${reply.status}` } }, {
        status: reply.status,
        headers: reply.headers,
      });
    }
    const completion = this.#completion(recorded, reply);
    if (recorded.body.stream === true) return this.#stream(recorded, reply, completion);
    return Response.json(completion, { headers: reply.headers });
  }

  /** The completion as SSE chunk events, cut or held as the reply says. */
  #stream(request: RecordedRequest, reply: ScriptedReply, completion: Completion): Response {
    const events = streamChunks(completion, (request.body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true);
    const encoder = new TextEncoder();
    const { cut, hold } = reply;
    const paceMs = reply.paceMs ?? 1;
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        for (const [index, event] of events.entries()) {
          if (cut && index === cut.afterChunks) {
            controller.close();
            return;
          }
          if (hold && index === hold.afterChunks) await hold.until;
          controller.enqueue(encoder.encode(`data: ${JSON.stringify(event)}\n\n`));
          // Separate writes, so the client really sees the answer arrive in pieces.
          if (paceMs > 0) await Bun.sleep(paceMs);
        }
        controller.enqueue(encoder.encode("data: [DONE]\n\n"));
        controller.close();
      },
    });
    return new Response(body, { headers: { ...reply.headers, "content-type": "text/event-stream", "cache-control": "no-cache" } });
  }

  #modelList(request: Request): Response {
    this.modelListRequests += 1;
    const { models = [], apiKey } = this.#options;
    // OpenAI's bearer token, or Anthropic's x-api-key header.
    const given = request.headers.get("x-api-key") ?? request.headers.get("authorization")?.replace(/^Bearer /, "");
    if (apiKey !== undefined && given !== apiKey) {
      return Response.json({ error: { message: "Incorrect API key provided", type: "invalid_request_error" } }, { status: 401 });
    }
    return Response.json({ object: "list", data: models.map((id) => ({ id, object: "model", created: 0, owned_by: "test" })) });
  }

  #nextReply(recorded: RecordedRequest): ScriptedReply | undefined {
    const index = this.#script.findIndex((reply) => reply.identity === undefined || reply.identity === recorded.identity);
    if (index >= 0) return this.#script.splice(index, 1)[0];
    if (this.#respond) {
      try {
        return this.#respond(recorded);
      } catch (error) {
        this.problems.push(`respond to request #${this.requests.length} failed: ${(error as Error).message}`);
        return undefined;
      }
    }
    this.problems.push(`unscripted request #${this.requests.length} from ${recorded.identity ?? "(no identity)"}`);
    return undefined;
  }

  #completion(request: RecordedRequest, reply: ScriptedReply): Completion {
    this.#completionCounter += 1;
    const toolCalls = reply.toolCalls?.map((call, i) => ({
      id: call.id ?? `call_${this.#completionCounter}_${i}`,
      type: "function",
      function: {
        name: call.name,
        arguments: typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments),
      },
    }));
    return {
      id: `chatcmpl-${this.#completionCounter}`,
      object: "chat.completion" as const,
      created: Math.floor(Date.now() / 1000),
      model: request.body.model,
      choices: [
        {
          index: 0,
          message: {
            role: "assistant" as const,
            content: reply.text ?? null,
            ...(reply.reasoning !== undefined ? { reasoning_content: reply.reasoning } : {}),
            ...(toolCalls && toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
          },
          finish_reason: reply.finishReason ?? (toolCalls && toolCalls.length > 0 ? "tool_calls" : "stop"),
        },
      ],
      usage: {
        prompt_tokens: reply.usage?.prompt_tokens ?? 10,
        completion_tokens: reply.usage?.completion_tokens ?? 5,
        total_tokens: (reply.usage?.prompt_tokens ?? 10) + (reply.usage?.completion_tokens ?? 5),
        ...(reply.usage?.cached_tokens !== undefined ? { prompt_tokens_details: { cached_tokens: reply.usage.cached_tokens } } : {}),
      },
    };
  }
}

/** The non-streamed completion the server sends (and streams in chunks). */
export interface Completion {
  id: string;
  object: "chat.completion";
  created: number;
  model: string;
  choices: Array<{
    index: number;
    message: {
      role: "assistant";
      content: string | null;
      reasoning_content?: string;
      tool_calls?: Array<{ id: string; type: string; function: { name: string; arguments: string } }>;
    };
    finish_reason: string;
  }>;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number; prompt_tokens_details?: { cached_tokens: number } };
}

/**
 * A whole completion as the chunk events that stream it: the role, the text a
 * word at a time, each tool call (id and name, then its arguments in up to
 * three pieces), the finish reason, and the usage alone in a last chunk.
 */
export function streamChunks(completion: Completion, includeUsage: boolean): Array<Record<string, unknown>> {
  const { id, created, model } = completion;
  const choice = completion.choices[0]!;
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
    id,
    object: "chat.completion.chunk",
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const events: Array<Record<string, unknown>> = [chunk({ role: "assistant", content: "" })];
  for (const word of (choice.message.reasoning_content ?? "").match(/\S+\s*|\s+/g) ?? []) events.push(chunk({ reasoning_content: word }));
  for (const word of (choice.message.content ?? "").match(/\S+\s*|\s+/g) ?? []) events.push(chunk({ content: word }));
  (choice.message.tool_calls ?? []).forEach((call, index) => {
    events.push(chunk({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } }] }));
    const text = call.function.arguments;
    const size = Math.max(1, Math.ceil(text.length / 3));
    for (let at = 0; at < text.length; at += size) {
      events.push(chunk({ tool_calls: [{ index, function: { arguments: text.slice(at, at + size) } }] }));
    }
  });
  events.push(chunk({}, choice.finish_reason));
  if (includeUsage) events.push({ id, object: "chat.completion.chunk", created, model, choices: [], usage: completion.usage });
  return events;
}
