import type { Screen, StatusLines } from "./screen.ts";

const REDRAW_MS = 1000;

/**
 * The status block of a run (the live team view): its lines shown by the
 * screen below the log, redrawn every second as times move; `clear()` takes
 * it off for good, before the final answer.
 */
export class StatusBlock {
  readonly #screen: Screen;
  readonly #lines: StatusLines;
  readonly #redrawMs: number;
  #timer: ReturnType<typeof setInterval> | undefined;
  #cleared = false;

  constructor(screen: Screen, lines: StatusLines, redrawMs = REDRAW_MS) {
    this.#screen = screen;
    this.#lines = lines;
    this.#redrawMs = redrawMs;
  }

  start(): void {
    if (this.#timer || this.#cleared) return;
    this.#screen.setStatus(this.#lines);
    this.#timer = setInterval(() => this.#screen.refresh(), this.#redrawMs);
    // Never the reason the process stays alive.
    this.#timer.unref?.();
  }

  /** Erases the block and stops drawing it. */
  clear(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    if (!this.#cleared) this.#screen.clearStatus();
    this.#cleared = true;
  }
}
