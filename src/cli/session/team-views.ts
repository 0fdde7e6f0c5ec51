import { LEAD } from "../../core/agent-name.ts";
import type { HistoryTail } from "../../follow/history-tail.ts";
import { followAgent } from "../../follow/session-follower.ts";
import { FollowLines } from "../terminal/follow-lines.ts";
import type { Channel, Screen } from "../terminal/screen.ts";
import { visibleControls } from "../../security/terminal-text.ts";

/** What the Lead's side of the session prints through: the answer stream, notes, progress lines. */
export interface ViewOutput {
  write(text: string, channel?: Channel): void;
  message(text: string, channel?: Channel): void;
  endLine(channel?: Channel): void;
}

export interface TeamViewsOptions {
  screen: Screen;
  /** The teammates that may be viewed now, in the order Ctrl-T cycles through them. */
  teammates: () => string[];
  /** A teammate's history, read from its start. */
  history: (name: string) => HistoryTail;
  columns: () => number;
  /** Called before the view changes: ends the Lead's half-streamed line, so nothing is drawn over it. */
  beforeSwitch?: () => void;
  /** How often a viewed teammate's history is looked at (ms). */
  everyMs?: number;
}

/** How much of a teammate's history is shown when the view switches to it; the rest is in `agent sessions show --follow`. */
const CATCH_UP_LINES = 20;
/** Held Lead output beyond this many characters is dropped, oldest first, and counted. */
const HELD_MAX_CHARS = 1_000_000;

type Held = { kind: "write" | "message" | "endLine"; text: string; channel: Channel | undefined };

/**
 * Which agent the session's main pane shows: the Lead (its answers, notes and
 * the team's progress, as always) or one teammate's stream, followed from its
 * history and laid out by the follower's renderer. While a teammate is in
 * view, everything the Lead's side prints is held — one line says so — and
 * printed, in order, when the view comes back to the Lead. Questions are
 * never held: they go to the screen whatever is in view.
 */
export class TeamViews {
  readonly #o: TeamViewsOptions;
  #viewing = LEAD;
  readonly #held: Held[] = [];
  #heldChars = 0;
  #dropped = 0;
  #saidHeld = false;
  #follow: AbortController | undefined;
  #following: Promise<unknown> = Promise.resolve();

  constructor(options: TeamViewsOptions) {
    this.#o = options;
  }

  /** The agent in view: `lead` or a teammate's name. */
  get viewing(): string {
    return this.#viewing;
  }

  /** Pieces of the Lead's output held now (0 while the Lead is in view). */
  get heldCount(): number {
    return this.#held.length;
  }

  /** The Lead's writers: straight to the screen while the Lead is in view, held otherwise. */
  readonly lead: ViewOutput = {
    write: (text, channel) => this.#leadOut({ kind: "write", text, channel }),
    message: (text, channel) => this.#leadOut({ kind: "message", text, channel }),
    endLine: (channel) => this.#leadOut({ kind: "endLine", text: "", channel }),
  };

  /** Shows `name` (a teammate, or `lead`); an unknown name is an error naming the ones there are. */
  show(name: string): void {
    if (name !== LEAD && !this.#o.teammates().includes(name)) {
      const known = [LEAD, ...this.#o.teammates()].join(", ");
      throw new Error(`no teammate named ${name}: view one of ${known}`);
    }
    if (name === this.#viewing) return;
    this.#o.beforeSwitch?.();
    this.#stopFollowing();
    this.#viewing = name;
    if (name === LEAD) this.#backToLead();
    else this.#startFollowing(name);
  }

  /** Ctrl-T: the Lead, then each teammate in turn, then the Lead again. */
  next(): void {
    const order = [LEAD, ...this.#o.teammates()];
    const at = order.indexOf(this.#viewing);
    this.show(order[(at + 1) % order.length] ?? LEAD);
  }

  /** Back to the Lead (the session ends): nothing held is lost. */
  async close(): Promise<void> {
    if (this.#viewing !== LEAD) this.show(LEAD);
    await this.#following;
  }

  #leadOut(piece: Held): void {
    const screen = this.#o.screen;
    if (this.#viewing === LEAD) {
      if (piece.kind === "write") screen.write(piece.text, piece.channel);
      else if (piece.kind === "message") screen.message(piece.text, piece.channel);
      else screen.endLine(piece.channel);
      return;
    }
    if (!this.#saidHeld && piece.kind !== "endLine") {
      this.#saidHeld = true;
      screen.message(`agent: the Lead has more to show: held while you view ${this.#viewing} (Ctrl-T or /view lead to see it)`);
    }
    this.#held.push(piece);
    this.#heldChars += piece.text.length;
    while (this.#heldChars > HELD_MAX_CHARS && this.#held.length > 1) {
      this.#heldChars -= this.#held.shift()!.text.length;
      this.#dropped += 1;
    }
  }

  #backToLead(): void {
    const held = this.#held.splice(0);
    const dropped = this.#dropped;
    [this.#heldChars, this.#dropped, this.#saidHeld] = [0, 0, false];
    const screen = this.#o.screen;
    screen.message(held.length === 0 ? "── the Lead ──" : `── the Lead: what it printed meanwhile ──${dropped > 0 ? ` (the first ${dropped} pieces were dropped)` : ""}`);
    for (const piece of held) this.#leadOut(piece);
  }

  #startFollowing(name: string): void {
    const screen = this.#o.screen;
    screen.message(`── ${name} (Ctrl-T: next, /view lead: back to the Lead) ──`);
    const lines = new FollowLines(name, { columns: this.#o.columns() });
    const stop = new AbortController();
    this.#follow = stop;
    // The history so far is gathered and only its end shown; what comes after is shown as it comes.
    let earlier: string[] | undefined = [];
    const emit = async (item: Parameters<FollowLines["render"]>[0]) => {
      if (stop.signal.aborted) return;
      // A teammate's history is a model's text: shown, not obeyed, on the terminal.
      const text = visibleControls(lines.render(item));
      if (text === "") return;
      if (earlier) earlier.push(...text.replace(/\n$/, "").split("\n"));
      else screen.message(text, "out");
    };
    const caughtUp = () => {
      const shown = earlier ?? [];
      earlier = undefined;
      if (stop.signal.aborted) return;
      if (shown.length > CATCH_UP_LINES) screen.message(`(${shown.length - CATCH_UP_LINES} earlier lines: agent sessions show --follow --agent ${name})`);
      if (shown.length > 0) screen.message(shown.slice(-CATCH_UP_LINES).join("\n"), "out");
    };
    this.#following = followAgent({ history: this.#o.history(name), running: async () => true }, emit, {
      everyMs: this.#o.everyMs ?? 200,
      signal: stop.signal,
      caughtUp,
    }).catch((error: unknown) => {
      if (!stop.signal.aborted) screen.message(`agent: could not follow ${name}: ${(error as Error).message}`);
    });
  }

  #stopFollowing(): void {
    this.#follow?.abort();
    this.#follow = undefined;
  }
}
