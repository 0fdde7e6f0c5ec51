import type { RunEvent } from "../../runtime/run-types.ts";
import type { TeamEvent } from "../../team/teammate-runtime.ts";
import { OrderedWriter } from "./ordered-writer.ts";
import { ProgressPrinter, type ProgressLevel } from "./progress.ts";
import { type OutputFormat, type RunInfo, eventJson, initJson, resultJson } from "./result-json.ts";
import { Spinner, canAnimate } from "./spinner.ts";
import type { TeamOutcome } from "./team-outcome.ts";

export interface RunOutputOptions {
  format: OutputFormat;
  level: ProgressLevel;
  stdout: (text: string) => Promise<void>;
  stderr: OrderedWriter;
  /** Whether stderr may show a spinner (a terminal, NO_COLOR unset). */
  animate: boolean;
  version: string;
}

/**
 * Everything `agent run` and `agent drain` print while they run: the Lead's,
 * teammates' and mailbox events to stdout as stream-json lines, progress to
 * stderr, then the result in the chosen format. stdout never carries anything
 * but the result.
 */
export class RunOutput {
  readonly #o: RunOutputOptions;
  readonly #stdout: OrderedWriter;
  readonly #progress: ProgressPrinter;
  /**
   * Events from before start(): building the runtime restores the team (claims,
   * teammates starting) before the init line can be printed, and the init line
   * must come first. Held here, and dropped if the runtime never starts.
   */
  #early: unknown[] | undefined = [];

  constructor(options: RunOutputOptions) {
    this.#o = options;
    this.#stdout = new OrderedWriter(options.stdout);
    const write = (text: string) => options.stderr.write(text);
    const spinner = options.animate && options.level !== "quiet" ? new Spinner(write) : undefined;
    this.#progress = new ProgressPrinter(write, options.level, spinner);
  }

  /** The first stream-json line, before the model is called. */
  start(info: RunInfo): void {
    const early = this.#early ?? [];
    this.#early = undefined;
    if (this.#o.format !== "stream-json") return;
    this.#line(initJson(info, this.#o.version));
    for (const value of early) this.#line(value);
  }

  readonly observe = (event: RunEvent): void => {
    this.#progress.observe(event);
    this.#event(event);
  };

  readonly observeTeam = (event: TeamEvent): void => {
    this.#progress.observeTeam(event);
    this.#event(event);
  };

  #event(event: RunEvent | TeamEvent): void {
    if (this.#o.format !== "stream-json") return;
    if (this.#early) this.#early.push(eventJson(event));
    else this.#line(eventJson(event));
  }

  /** A line for the user on stderr (not with --quiet): what is left to do, or that there was nothing. */
  note(text: string): void {
    this.#progress.stop();
    if (this.#o.level !== "quiet") this.#o.stderr.write(`agent: ${text}\n`);
  }

  /** Stops the spinner; call as soon as the run is over, before anything else is printed. */
  stopProgress(): void {
    this.#progress.stop();
  }

  /** Prints the result and waits until stdout has it. Text mode prints nothing for a failed run: its error line says it. */
  async finish(outcome: TeamOutcome, info: RunInfo): Promise<void> {
    this.stopProgress();
    const { result } = outcome;
    if (this.#o.format !== "text") this.#line(resultJson(result, info, outcome));
    else if (!result.isError && result.result.length > 0) {
      this.#stdout.write(result.result.endsWith("\n") ? result.result : `${result.result}\n`);
    }
    await this.#stdout.flush();
  }

  #line(value: unknown): void {
    this.#stdout.write(`${JSON.stringify(value)}\n`);
  }
}

export function stderrCanAnimate(): boolean {
  return canAnimate(process.env, process.stderr.isTTY === true);
}
