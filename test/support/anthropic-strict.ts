import { breachBody, type RuleBreach, type RuleContext, requestBreach } from "../../src/model/anthropic/request-rules.ts";

// The strict half of the scripted server for Anthropic Messages requests: it
// judges each request by the API's own rules (src/model/anthropic/request-rules.ts)
// and answers a breach with the API's 400 body, as api.anthropic.com would.
// The rules about thinking blocks need what only the server knows — the
// answers it gave — so it reads every answer it sends.

type Json = Record<string, unknown>;

export class AnthropicStrictMock implements RuleContext {
  /** Every answer sent, its blocks as they streamed. */
  readonly #answers: Json[][] = [];
  readonly #thoughts = new Set<string>();
  #judged = 0;

  /** The breach a request body makes and the 400 answering it; none for a request the API takes. */
  judge(body: unknown): { breach: RuleBreach; response: Response } | undefined {
    this.#judged += 1;
    const breach = requestBreach((body ?? {}) as Json, this);
    if (!breach) return undefined;
    const requestId = `req_strict_${String(this.#judged).padStart(4, "0")}`;
    return { breach, response: Response.json(breachBody(breach, requestId), { status: 400, headers: { "request-id": requestId } }) };
  }

  /** Learns the blocks of an answer about to be sent: an event stream, or a whole message. */
  sent(raw: { contentType: string; body: string }): void {
    const blocks = raw.contentType.includes("text/event-stream") ? streamedBlocks(raw.body) : wholeBlocks(raw.body);
    if (blocks.length === 0) return;
    this.#answers.push(blocks);
    for (const block of blocks) if (isThought(block)) this.#thoughts.add(thoughtKey(block));
  }

  issued(block: Json): boolean {
    const extra = Object.keys(block).filter((key) => !["type", "thinking", "signature", "data"].includes(key));
    return extra.length === 0 && this.#thoughts.has(thoughtKey(block));
  }

  answerOf(message: readonly Json[]): readonly Json[] | undefined {
    const keys = new Set(message.map(answerKey).filter((key) => key !== undefined));
    return this.#answers.findLast((answer) => answer.some((block) => keys.has(answerKey(block) ?? "")));
  }
}

function isThought(block: Json): boolean {
  return block.type === "thinking" || block.type === "redacted_thinking";
}

function thoughtKey(block: Json): string {
  return JSON.stringify([block.type, block.thinking, block.signature, block.data]);
}

/** What ties a sent-back block to the answer it came in: a thought whole, a call by its id. */
function answerKey(block: Json): string | undefined {
  if (isThought(block)) return thoughtKey(block);
  if (block.type === "tool_use") return `tool_use ${String(block.id)}`;
  return undefined;
}

function streamedBlocks(body: string): Json[] {
  const blocks: Json[] = [];
  for (const line of body.split(/\r?\n/)) {
    if (!line.startsWith("data:")) continue;
    let event: Json;
    try {
      event = JSON.parse(line.slice(5)) as Json;
    } catch {
      continue;
    }
    const index = typeof event.index === "number" ? event.index : -1;
    if (event.type === "content_block_start" && index >= 0) blocks[index] = { ...(event.content_block as Json) };
    if (event.type !== "content_block_delta" || !blocks[index]) continue;
    const block = blocks[index]!;
    const delta = event.delta as Json;
    if (delta.type === "text_delta") block.text = String(block.text ?? "") + String(delta.text);
    if (delta.type === "thinking_delta") block.thinking = String(block.thinking ?? "") + String(delta.thinking);
    if (delta.type === "signature_delta") block.signature = String(block.signature ?? "") + String(delta.signature);
  }
  return blocks.filter((block) => block !== undefined);
}

function wholeBlocks(body: string): Json[] {
  try {
    const message = JSON.parse(body) as Json;
    return Array.isArray(message.content) ? (message.content as Json[]) : [];
  } catch {
    return [];
  }
}
