import { type ResponsesBreach, type ResponsesRuleContext, responsesBreach, responsesBreachBody } from "../../src/model/responses/request-rules.ts";

// The strict half of the scripted server for Responses requests: each request's
// input judged by the API's own rules (src/model/responses/request-rules.ts), a
// breach answered with the API's 400 body. Which reasoning item went with which
// call only the server knows, so it reads every answer it sends.

type Item = Record<string, unknown>;

export class ResponsesStrictMock implements ResponsesRuleContext {
  /** Each reasoning item given, by id: its encrypted content, what the API verifies. */
  readonly #reasoning = new Map<string, string>();
  /** For each call given, the reasoning item before it in its answer. */
  readonly #before = new Map<string, string>();

  judge(body: unknown): { breach: ResponsesBreach; response: Response } | undefined {
    const breach = responsesBreach((body ?? {}) as { input?: unknown }, this);
    return breach ? { breach, response: Response.json(responsesBreachBody(breach), { status: 400 }) } : undefined;
  }

  /** Learns the items of an answer about to be sent (an event stream's end event, or its items as they finish). */
  sent(raw: { contentType: string; body: string }): void {
    if (!raw.contentType.includes("text/event-stream")) return;
    const items: Item[] = [];
    for (const line of raw.body.split(/\r?\n/)) {
      if (!line.startsWith("data:")) continue;
      try {
        const event = JSON.parse(line.slice(5)) as Item;
        if (event.type === "response.output_item.done" && typeof event.output_index === "number") items[event.output_index] = event.item as Item;
      } catch {
        // Not JSON: the adapter's problem, not this mock's.
      }
    }
    let reasoning: string | undefined;
    for (const item of items.filter((item) => item !== undefined)) {
      if (item.type === "reasoning") {
        reasoning = String(item.id);
        this.#reasoning.set(reasoning, JSON.stringify(item.encrypted_content));
      }
      if (item.type === "function_call" && reasoning !== undefined) this.#before.set(String(item.call_id), reasoning);
    }
  }

  issued(item: Item): boolean {
    return this.#reasoning.get(String(item.id)) === JSON.stringify(item.encrypted_content);
  }

  reasoningBefore(callId: string): string | undefined {
    return this.#before.get(callId);
  }
}
