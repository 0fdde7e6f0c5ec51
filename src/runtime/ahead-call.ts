import type { AnswerPiece, ChatMessage, ModelClient, ModelResponse, ModelRetryInfo, ToolSpec } from "../model/types.ts";

/** Whether two lists hold the same items: the same objects (a history's messages), or equal ones. */
function sameItems<T>(sent: readonly T[], asked: readonly T[]): boolean {
  return sent.length === asked.length && sent.every((item, i) => item === asked[i] || JSON.stringify(item) === JSON.stringify(asked[i]));
}

type Heard = { text: string } | { piece: AnswerPiece } | { retry: ModelRetryInfo };

/** Where a call's streamed answer goes: its text, its other pieces, its retries. */
export interface AnswerListener {
  onText: (text: string) => void;
  onPiece: (piece: AnswerPiece) => void;
  onRetry: (info: ModelRetryInfo) => void;
}

/**
 * A model call made before its turn asks for it: a new teammate's first
 * request goes out while its spawn's durable writes (team.json, lease,
 * mailbox) are still being made, so the model's time and the disk's overlap.
 * Nothing acts on the answer before the turn takes it, and the turn starts
 * only once the spawn is durable: what is durable before anything acts on it
 * stays as it was. What streams in meanwhile is held and told to the turn when
 * it takes the call. A call never taken is aborted (`abandon`).
 */
export class AheadCall {
  readonly #request: { messages: readonly ChatMessage[]; tools: readonly ToolSpec[] };
  readonly #controller = new AbortController();
  readonly #response: Promise<ModelResponse>;
  #held: Heard[] = [];
  #listener: ((heard: Heard) => void) | undefined;

  constructor(model: ModelClient, request: { identity: string; messages: ChatMessage[]; tools: ToolSpec[] }) {
    this.#request = { messages: request.messages, tools: request.tools };
    this.#response = model.complete({
      ...request,
      signal: this.#controller.signal,
      onText: (text) => this.#hear({ text }),
      onPiece: (piece) => this.#hear({ piece }),
      onRetry: (retry) => this.#hear({ retry }),
    });
    // Its failure is the turn's to see, when it takes the call; one never taken has none.
    this.#response.catch(() => {});
  }

  /**
   * Whether the turn asks exactly the request this call made, byte for byte. A
   * history's messages are compared as objects, so a long history costs a
   * pointer compare a message, not its encoding.
   */
  fits(messages: readonly ChatMessage[], tools: readonly ToolSpec[]): boolean {
    return sameItems(this.#request.messages, messages) && sameItems(this.#request.tools, tools);
  }

  /**
   * The answer, for the turn that asks exactly this request: what streamed in
   * before is told first, the rest as it comes; `signal` stops it as it would
   * the turn's own call.
   */
  take(signal: AbortSignal | undefined, { onText, onPiece, onRetry }: AnswerListener): Promise<ModelResponse> {
    const listener = (heard: Heard) => ("text" in heard ? onText(heard.text) : "piece" in heard ? onPiece(heard.piece) : onRetry(heard.retry));
    for (const heard of this.#held) listener(heard);
    this.#held = [];
    this.#listener = listener;
    if (signal?.aborted) this.#controller.abort(signal.reason);
    else if (signal) {
      const stop = () => this.#controller.abort(signal.reason);
      signal.addEventListener("abort", stop, { once: true });
      // Not kept past the call: a teammate's signal lives as long as its loop.
      void this.#response.finally(() => signal.removeEventListener("abort", stop)).catch(() => {});
    }
    return this.#response;
  }

  /** Not the request the turn makes (or no turn comes): the call is stopped. */
  abandon(): void {
    this.#controller.abort(new Error("a model call made ahead was not the turn's request"));
  }

  #hear(heard: Heard): void {
    if (this.#listener) this.#listener(heard);
    else this.#held.push(heard);
  }
}
