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
 */
import type { Server } from "bun";

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
  toolCalls?: ScriptedToolCall[];
  finishReason?: "stop" | "tool_calls" | "length" | "content_filter";
  usage?: { prompt_tokens: number; completion_tokens: number };
  /** A raw HTTP answer instead of a completion: e.g. 429 with Retry-After, 500, 400 context overflow. */
  status?: number;
  headers?: Record<string, string>;
  body?: unknown;
  /** Wait this long before answering. */
  delayMs?: number;
  /** Runs on the request before answering; a throw is reported by assertDone. */
  check?: (request: RecordedRequest) => void;
}

export interface RecordedRequest {
  identity: string | undefined;
  headers: Record<string, string>;
  body: {
    model: string;
    messages: Array<Record<string, unknown>>;
    tools?: Array<{ type: string; function: { name: string; description?: string; parameters?: unknown } }>;
    [key: string]: unknown;
  };
  /** When it arrived (ms since epoch). */
  at: number;
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
  /** With `models`: the key `GET /models` requires (401 for any other or none). */
  apiKey?: string;
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
    if (request.method !== "POST" || !path.endsWith("/chat/completions")) {
      this.problems.push(`unexpected ${request.method} ${path}`);
      return Response.json({ error: { message: `no route ${path}` } }, { status: 404 });
    }
    const headers = Object.fromEntries(request.headers.entries());
    const recorded: RecordedRequest = {
      identity: headers["x-agent-name"],
      headers,
      body: (await request.json()) as RecordedRequest["body"],
      at: Date.now(),
    };
    this.requests.push(recorded);
    const reply = this.#nextReply(recorded);
    if (!reply) return Response.json({ error: { message: "no scripted reply left", type: "server_error" } }, { status: 500 });
    try {
      reply.check?.(recorded);
    } catch (error) {
      this.problems.push(`check of request #${this.requests.length} failed: ${(error as Error).message}`);
    }
    if (reply.delayMs) await Bun.sleep(reply.delayMs);
    if (reply.status !== undefined) {
      return Response.json(reply.body ?? { error: { message: `scripted ${reply.status}` } }, {
        status: reply.status,
        headers: reply.headers,
      });
    }
    return Response.json(this.#completion(recorded, reply), { headers: reply.headers });
  }

  #modelList(request: Request): Response {
    this.modelListRequests += 1;
    const { models = [], apiKey } = this.#options;
    if (apiKey !== undefined && request.headers.get("authorization") !== `Bearer ${apiKey}`) {
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

  #completion(request: RecordedRequest, reply: ScriptedReply) {
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
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model: request.body.model,
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: reply.text ?? null,
            ...(toolCalls && toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
          },
          finish_reason: reply.finishReason ?? (toolCalls && toolCalls.length > 0 ? "tool_calls" : "stop"),
        },
      ],
      usage: {
        prompt_tokens: reply.usage?.prompt_tokens ?? 10,
        completion_tokens: reply.usage?.completion_tokens ?? 5,
        total_tokens: (reply.usage?.prompt_tokens ?? 10) + (reply.usage?.completion_tokens ?? 5),
      },
    };
  }
}
