import type { RunEvent, RunResult } from "../../runtime/run-types.ts";
import { OrderedWriter } from "./ordered-writer.ts";
import { ProgressPrinter, type ProgressLevel } from "./progress.ts";
import { type OutputFormat, type RunInfo, eventJson, initJson, resultJson } from "./result-json.ts";
import { Spinner, canAnimate } from "./spinner.ts";

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
 * Everything `agent run` prints while it runs: events to stdout as stream-json
 * lines, progress to stderr, then the result in the chosen format. stdout never
 * carries anything but the result.
 */
export class RunOutput {
  readonly #o: RunOutputOptions;
  readonly #stdout: OrderedWriter;
  readonly #progress: ProgressPrinter;

  constructor(options: RunOutputOptions) {
    this.#o = options;
    this.#stdout = new OrderedWriter(options.stdout);
    const write = (text: string) => options.stderr.write(text);
    const spinner = options.animate && options.level !== "quiet" ? new Spinner(write) : undefined;
    this.#progress = new ProgressPrinter(write, options.level, spinner);
  }

  /** The first stream-json line, before the model is called. */
  start(info: RunInfo): void {
    if (this.#o.format === "stream-json") this.#line(initJson(info, this.#o.version));
  }

  readonly observe = (event: RunEvent): void => {
    this.#progress.observe(event);
    if (this.#o.format === "stream-json") this.#line(eventJson(event));
  };

  /** Stops the spinner; call as soon as the run is over, before anything else is printed. */
  stopProgress(): void {
    this.#progress.stop();
  }

  /** Prints the result and waits until stdout has it. Text mode prints nothing for a failed run: its error line says it. */
  async finish(result: RunResult, info: RunInfo): Promise<void> {
    this.stopProgress();
    if (this.#o.format !== "text") this.#line(resultJson(result, info));
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
