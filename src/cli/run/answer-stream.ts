import { LEAD } from "../../core/agent-name.ts";
import type { RunEvent } from "../../runtime/run-types.ts";
import { visibleControls } from "../../security/terminal-text.ts";

/**
 * The Lead's answer on a terminal, printed as it streams in. Only the Lead's
 * text: teammates work in the background and speak through it. Each reply ends
 * its line, so progress on stderr (the same terminal) never lands mid-sentence;
 * a retried request starts a fresh line, the cut text stays visible above it.
 * At the end, `coversResult` says whether the final answer was the last reply
 * streamed, so it is not printed twice.
 */
export class AnswerStream {
  /** The reply streaming now. */
  #current = "";
  /** The last whole reply, unless tool calls followed it (then it was not the answer). */
  #lastReply = "";
  #midLine = false;

  constructor(
    private readonly write: (text: string) => void,
    /** Called when a reply ends (after its last newline): a renderer draws what it held (markdown.ts). */
    private readonly end?: () => void,
  ) {}

  /** Takes every event; acts on the Lead's. */
  observe(event: RunEvent): void {
    if (event.agent !== LEAD) return;
    switch (event.type) {
      case "assistant_delta":
        this.#current += event.text;
        // The model's text: on the terminal its control characters are shown, never obeyed.
        this.write(visibleControls(event.text));
        this.#midLine = !event.text.endsWith("\n");
        return;
      case "assistant":
        this.#lastReply = this.#current;
        this.#current = "";
        this.endLine();
        this.end?.();
        return;
      case "model_retry":
        this.#current = "";
        this.endLine();
        this.end?.();
        return;
      case "tool_call":
        this.#lastReply = "";
        return;
    }
  }

  /** True while a reply is half printed: nothing else may draw on its line. */
  get midLine(): boolean {
    return this.#midLine;
  }

  /** Whether the Lead is about to print: a piece of its answer, or the end of a reply (a renderer may draw what it held). */
  static prints(event: RunEvent): boolean {
    return (event.type === "assistant_delta" || event.type === "assistant") && event.agent === LEAD;
  }

  /** True when `result` is what was streamed last, so printing it again would repeat it. */
  coversResult(result: string): boolean {
    this.endLine();
    const covered = result.length > 0 && this.#lastReply.trimEnd() === result.trimEnd();
    // Asked once per turn: the next turn's answer is judged on its own replies.
    this.#lastReply = "";
    return covered;
  }

  /** Ends a half-printed reply's line (a note is about to be printed: a cut answer, a Ctrl-C). */
  endLine(): void {
    if (!this.#midLine) return;
    this.write("\n");
    this.#midLine = false;
  }
}
