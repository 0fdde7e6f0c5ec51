import type { FollowItem } from "../../follow/session-follower.ts";
import { type TimelineEntry, historyEntries } from "../../timeline/session-timeline.ts";
import { clip } from "../run/progress.ts";

/** How a followed agent's lines are laid out. */
export interface FollowLinesOptions {
  /** Lines other than answers are cut to this width (an answer is shown whole, the terminal wraps it). */
  columns: number;
}

/**
 * Turns what a follower found into the lines a person reads: each tool call
 * with its arguments, its result (named by the call it answers), the agent's
 * answers whole, the messages it was given, and its turns ending. Shared by
 * `agent sessions show --follow` and the interactive session's teammate view.
 */
export class FollowLines {
  /** Tool names by call id, so a result says which tool it is from. */
  readonly #tools = new Map<string, string>();

  constructor(
    readonly agent: string,
    readonly options: FollowLinesOptions,
  ) {}

  /** The text for `item`, each line ending in a newline; empty when it shows nothing. */
  render(item: FollowItem): string {
    switch (item.type) {
      case "record":
        return historyEntries(this.agent, item.record)
          .map((entry) => this.#entry(entry))
          .join("");
      case "mail": {
        const { entry } = item.change;
        const what = `${entry.kind ?? "message"} from ${entry.sender ?? "?"}`;
        const at = stamp(entry.createdAtUtc ?? new Date().toISOString());
        return item.change.change === "arrived"
          ? this.#line(`${at} ✉ new ${what}`)
          : this.#line(`${at} ✉ ${what} was quarantined: ${entry.reason ?? "no reason recorded"}`);
      }
      case "replaced":
        return this.#line(`— a new history of ${this.agent} begins (the name was taken again) —`);
      case "gone":
        return this.#line(`— ${this.agent}'s history was moved aside (the teammate was replaced or removed) —`);
    }
  }

  #entry(entry: TimelineEntry): string {
    const at = stamp(entry.at);
    const detail = entry.detail ?? {};
    switch (entry.kind) {
      case "tool_call":
        this.#tools.set(String(detail.id), String(detail.name));
        return this.#line(`${at} → ${entry.text}`);
      case "tool_result": {
        const name = this.#tools.get(String(detail.id)) ?? "tool";
        return detail.is_error === true ? this.#line(`${at} ← ${name} failed: ${entry.text.replace(/^error: /, "")}`) : this.#line(`${at} ← ${name} ok: ${entry.text}`);
      }
      case "assistant": {
        const text = entry.text.endsWith("\n") ? entry.text : `${entry.text}\n`;
        return `${at} ${this.agent}: ${text}`;
      }
      case "user":
        return this.#line(`${at} > ${entry.text}`);
      case "event":
        return this.#line(`${at} ✉ ${entry.text}`);
      case "turn":
        return detail.status === "started" ? "" : this.#line(`${at} — ${entry.text.replace(/^(turn finished \([^)]*\)):.*$/s, "$1")}`);
      case "compaction":
        return this.#line(`${at} — ${entry.text}`);
      case "model_call":
        return "";
    }
  }

  /** One line, cut to the width: newlines shown as ⏎. */
  #line(text: string): string {
    return `${clip(text, Math.max(20, this.options.columns))}\n`;
  }
}

/** HH:MM:SS of a UTC instant. */
function stamp(at: string): string {
  return at.slice(11, 19);
}
