import type { FinishReason } from "../../model/types.ts";
import type { RunEvent } from "../../runtime/run-types.ts";

// `--include-partial-messages` in Claude's shape: each Lead answer as the
// Anthropic Messages streaming events it would be (the SDK's
// SDKPartialAssistantMessage wraps one each) — message_start, a
// content_block_start / _delta… / _stop per block (text, tool_use with its
// input JSON, thinking), message_delta with the stop reason and the output
// tokens, message_stop — built from the run's pieces of the answer and its
// `usage`, which comes once the answer is whole.

type Block = { type: "text" } | { type: "thinking" } | { type: "tool_use"; call: number };

/** Ours as Anthropic's stop_reason. */
const STOP_REASONS: Record<FinishReason, string | null> = { stop: "end_turn", tool_calls: "tool_use", length: "max_tokens", content_filter: "refusal", other: null };

export class ClaudePartialMessages {
  #message: { id: string; blocks: number; open?: Block } | undefined;
  /** The id of the answer streamed last, for the assistant lines that follow it (they share it, as Claude Code's do). */
  #lastId: string | undefined;

  constructor(private readonly model: () => string) {}

  /** The id the Lead's next assistant line carries: the streamed message's, else a new one. */
  messageId(): string {
    return this.#lastId ?? `msg_${crypto.randomUUID().replaceAll("-", "")}`;
  }

  /** The Anthropic events one of the Lead's run events makes (none for most). */
  event(event: RunEvent): Record<string, unknown>[] {
    switch (event.type) {
      case "model_request":
        // A new answer: its lines get a new id.
        this.#lastId = undefined;
        this.#message = undefined;
        return [];
      case "model_retry":
        // The pieces so far are void: the next piece starts the answer again.
        this.#message = undefined;
        return [];
      case "assistant_delta":
        return [...this.#into({ type: "text" }), delta({ type: "text_delta", text: event.text }, this.#index())];
      case "thinking_delta":
        return [...this.#into({ type: "thinking" }), delta({ type: "thinking_delta", thinking: event.text }, this.#index())];
      case "tool_input_delta": {
        const opened = this.#into({ type: "tool_use", call: event.index }, { id: event.id, name: event.name });
        return event.json === "" ? opened : [...opened, delta({ type: "input_json_delta", partial_json: event.json }, this.#index())];
      }
      case "usage": {
        const started = this.#start();
        const stop = this.#closeBlock();
        this.#message = undefined;
        return [
          ...started,
          ...stop,
          { type: "message_delta", delta: { stop_reason: STOP_REASONS[event.finishReason], stop_sequence: null }, usage: { input_tokens: event.inputTokens, output_tokens: event.outputTokens } },
          { type: "message_stop" },
        ];
      }
      default:
        return [];
    }
  }

  #index(): number {
    return (this.#message?.blocks ?? 1) - 1;
  }

  /** message_start if the answer has not started, then the block `block` (the one open stopped first when it is another). */
  #into(block: Block, tool?: { id: string; name: string }): Record<string, unknown>[] {
    const lines = this.#start();
    const message = this.#message!;
    const open = message.open;
    if (open && open.type === block.type && (open.type !== "tool_use" || (block.type === "tool_use" && open.call === block.call))) return lines;
    lines.push(...this.#closeBlock());
    message.open = block;
    message.blocks += 1;
    const content =
      block.type === "text" ? { type: "text", text: "" } : block.type === "thinking" ? { type: "thinking", thinking: "", signature: "" } : { type: "tool_use", id: tool?.id ?? "", name: tool?.name ?? "", input: {} };
    lines.push({ type: "content_block_start", index: message.blocks - 1, content_block: content });
    return lines;
  }

  #start(): Record<string, unknown>[] {
    if (this.#message) return [];
    const id = `msg_${crypto.randomUUID().replaceAll("-", "")}`;
    this.#message = { id, blocks: 0 };
    this.#lastId = id;
    const message = { id, type: "message", role: "assistant", model: this.model(), content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 0, output_tokens: 0 } };
    return [{ type: "message_start", message }];
  }

  #closeBlock(): Record<string, unknown>[] {
    const message = this.#message;
    if (!message?.open) return [];
    message.open = undefined;
    return [{ type: "content_block_stop", index: message.blocks - 1 }];
  }
}

function delta(body: Record<string, unknown>, index: number): Record<string, unknown> {
  return { type: "content_block_delta", index, delta: body };
}
