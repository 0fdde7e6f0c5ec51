const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const INTERVAL_MS = 80;
/** Back to the start of the line and erase it: the spinner never leaves a trace. */
const CLEAR_LINE = "\r\x1b[K";

/**
 * Whether stderr may animate: only a terminal, and not when the user opted out
 * with NO_COLOR (no-color.org: any non-empty value) or has a dumb terminal.
 */
export function canAnimate(env: Record<string, string | undefined>, stderrIsTty: boolean): boolean {
  return stderrIsTty && (env.NO_COLOR ?? "") === "" && env.TERM !== "dumb";
}

/** One line on stderr redrawn in place while the model is thinking. */
export class Spinner {
  #timer: ReturnType<typeof setInterval> | undefined;
  #frame = 0;
  #label = "";
  #since = 0;

  constructor(private readonly write: (text: string) => void) {}

  start(label: string): void {
    this.stop();
    this.#label = label;
    this.#since = Date.now();
    this.#draw();
    this.#timer = setInterval(() => this.#draw(), INTERVAL_MS);
    // Never the reason the process stays alive.
    this.#timer.unref?.();
  }

  /** Erases the line; call before printing anything else to stderr. */
  stop(): void {
    if (!this.#timer) return;
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.write(CLEAR_LINE);
  }

  #draw(): void {
    const seconds = Math.floor((Date.now() - this.#since) / 1000);
    const frame = FRAMES[this.#frame++ % FRAMES.length];
    this.write(`${CLEAR_LINE}${frame} ${this.#label}${seconds > 0 ? ` ${seconds}s` : ""}`);
  }
}
