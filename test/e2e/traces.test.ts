import { afterEach, describe, expect, test } from "bun:test";
import type { Server } from "bun";
import { parseResult, scriptedServers } from "./run-fixture.ts";
import { FINAL_ANSWER, SEED_PROMPT, seedScript, teamSetup } from "./team-fixture.ts";

// OpenTelemetry traces of a Lead + two teammates run on the compiled binary,
// received by an OTLP/HTTP JSON receiver written here, on 127.0.0.1.

const startServer = scriptedServers();

interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: { key: string; value: Record<string, unknown> }[];
  status: { code: number };
}

class OtlpReceiver {
  readonly spans: Span[] = [];
  readonly posts: { path: string; contentType: string | null; auth: string | null }[] = [];
  readonly #server: Server<undefined>;
  constructor() {
    this.#server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: async (request) => {
        this.posts.push({ path: new URL(request.url).pathname, contentType: request.headers.get("content-type"), auth: request.headers.get("authorization") });
        const body = (await request.json()) as { resourceSpans: { scopeSpans: { spans: Span[] }[] }[] };
        for (const resource of body.resourceSpans) for (const scope of resource.scopeSpans) this.spans.push(...scope.spans);
        return Response.json({});
      },
    });
  }
  get url(): string {
    return `http://127.0.0.1:${this.#server.port}`;
  }
  close() {
    return this.#server.stop(true);
  }
}

let receiver: OtlpReceiver | undefined;
afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
});

const attr = (span: Span, key: string) => {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return value === undefined ? undefined : Object.values(value)[0];
};

describe("OpenTelemetry traces", () => {
  test("a Lead + two teammates run is one connected trace: teammates' turns under the sends that caused them", async () => {
    receiver = new OtlpReceiver();
    const server = startServer(seedScript());
    const { run } = teamSetup();
    const result = await run([SEED_PROMPT, "--base-url", server.url, "--permission-mode", "acceptEdits", "--output", "json"], {
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer%20t0k" },
    });
    expect(result.code).toBe(0);
    expect(parseResult(result.stdout).result).toBe(FINAL_ANSWER);
    server.assertDone();
    expect(receiver.posts[0]).toEqual({ path: "/v1/traces", contentType: "application/json", auth: "Bearer t0k" });

    const spans = receiver.spans;
    const byId = new Map(spans.map((span) => [span.spanId, span]));
    const parent = (span: Span) => (span.parentSpanId === undefined ? undefined : byId.get(span.parentSpanId));
    // One trace, one root, every parent present.
    expect(new Set(spans.map((span) => span.traceId)).size).toBe(1);
    const roots = spans.filter((span) => span.parentSpanId === undefined);
    expect(roots.map((span) => span.name)).toEqual(["agent run"]);
    for (const span of spans) if (span.parentSpanId !== undefined) expect(byId.has(span.parentSpanId)).toBe(true);

    const turns = (agent: string) => spans.filter((span) => span.name === `turn ${agent}`);
    expect(turns("lead")).toHaveLength(4);
    // alice: her task, then bob's answer to her word.
    expect(turns("alice")).toHaveLength(2);
    expect(turns("bob")).toHaveLength(2);
    // Model calls: one span each, with the tokens the server reported.
    const chats = spans.filter((span) => span.name.startsWith("chat "));
    expect(chats).toHaveLength(server.requests.length);
    for (const chat of chats) {
      expect(attr(chat, "gen_ai.usage.input_tokens")).toBe("10");
      expect(parent(chat)!.name).toStartWith("turn ");
    }

    // alice's turn ← mailbox send of her task ← the Lead's spawn_teammate call ← the Lead's user turn ← the run.
    const alice = turns("alice")[0]!;
    const send = parent(alice)!;
    expect(send.name).toBe("mailbox send");
    expect(attr(send, "messaging.message.id")).toBe(attr(alice, "agent.turn.key"));
    const spawn = parent(send)!;
    expect([spawn.name, attr(spawn, "agent.name")]).toEqual(["tool spawn_teammate", "lead"]);
    expect(parent(spawn)!.name).toBe("turn lead");
    expect(parent(parent(spawn)!)!.name).toBe("agent run");

    // bob's second turn ← the send of alice's word ← alice's send_message call.
    const word = parent(turns("bob")[1]!)!;
    expect(word.name).toBe("mailbox send");
    expect([parent(word)!.name, attr(parent(word)!, "agent.name")]).toEqual(["tool send_message", "alice"]);

    // Each Lead event turn ← the send of its first event: a teammate's result ← that teammate's turn,
    // or an idle notice held back until a result came (sent after its teammate's turn, not in it).
    const eventTurns = turns("lead").filter((span) => parent(span)!.name !== "agent run");
    expect(eventTurns).toHaveLength(3);
    for (const turn of eventTurns) {
      const send = parent(turn)!;
      expect(send.name).toBe("mailbox send");
      expect(["result", "idle"]).toContain(attr(send, "messaging.message.kind") as string);
      if (attr(send, "messaging.message.kind") === "result") expect(parent(send)!.name).toMatch(/^turn (alice|bob)$/);
    }
    expect(eventTurns.filter((turn) => attr(parent(turn)!, "messaging.message.kind") === "result").length).toBeGreaterThanOrEqual(2);
    // The tool calls: write_file by alice, succeeded.
    const write = spans.find((span) => span.name === "tool write_file")!;
    expect([attr(write, "agent.name"), attr(write, "tool.effect"), attr(write, "tool.is_error"), write.status.code]).toEqual(["alice", "edit", false, 0]);
  });

  test("off unless asked: OTEL_SDK_DISABLED=true sends nothing even with an endpoint", async () => {
    receiver = new OtlpReceiver();
    const server = startServer([{ text: "hi" }]);
    const { run } = teamSetup();
    const result = await run(["hello", "--base-url", server.url], { env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SDK_DISABLED: "true" } });
    expect(result.code).toBe(0);
    expect(receiver.posts).toEqual([]);
  });

  test("a collector that is down costs a warning, not the run", async () => {
    const server = startServer([{ text: "hi" }]);
    const { run } = teamSetup();
    const result = await run(["hello", "--base-url", server.url], { env: { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9/nothing" } });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("hi\n");
    expect(result.stderr).toContain("agent: warning: OTLP export to http://127.0.0.1:9/nothing/v1/traces failed");
  });
});
