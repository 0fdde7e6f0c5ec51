import type { AnswerPiece } from "../model/types.ts";
import { StreamRedactor } from "../security/stream-redact.ts";
import type { RunEvent } from "./run-types.ts";

type PieceEvent = Extract<RunEvent, { type: "tool_input_delta" | "thinking_delta" }>;
type Unowned<T> = T extends unknown ? Omit<T, "agent"> : never;

/**
 * An answer's pieces besides its text (tool calls' input, reasoning) as run
 * events, masked over each stream as the text is (a key split across pieces
 * is still masked): one redactor for the reasoning and one per call. A call's
 * first piece is told even when empty, so a reader learns the call began.
 */
export class AnswerPieces {
  readonly #thinking = new StreamRedactor();
  readonly #calls = new Map<number, { id: string; name: string; redactor: StreamRedactor }>();

  constructor(private readonly emit: (event: Unowned<PieceEvent>) => void) {}

  readonly push = (piece: AnswerPiece): void => {
    if (piece.kind === "thinking") {
      const text = this.#thinking.push(piece.text);
      if (text !== "") this.emit({ type: "thinking_delta", text });
      return;
    }
    let call = this.#calls.get(piece.index);
    const starts = call === undefined;
    call ??= { id: piece.id, name: piece.name, redactor: new StreamRedactor() };
    // A later delta may be the one naming the call (OpenAI sends the id with the first only).
    call.id = piece.id || call.id;
    call.name = piece.name || call.name;
    this.#calls.set(piece.index, call);
    const json = call.redactor.push(piece.json);
    if (starts || json !== "") this.emit({ type: "tool_input_delta", index: piece.index, id: call.id, name: call.name, json });
  };

  /** The answer is over (or voided by a retry): what each stream still holds is told, and the calls forgotten. */
  end(): void {
    const thinking = this.#thinking.end();
    if (thinking !== "") this.emit({ type: "thinking_delta", text: thinking });
    for (const [index, call] of this.#calls) {
      const json = call.redactor.end();
      if (json !== "") this.emit({ type: "tool_input_delta", index, id: call.id, name: call.name, json });
    }
    this.#calls.clear();
  }
}
