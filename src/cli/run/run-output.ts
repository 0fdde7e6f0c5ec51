import type { RunEvent } from "../../runtime/run-types.ts";
import type { TeamEvent } from "../../team/teammate-runtime.ts";
import { AnswerStream } from "./answer-stream.ts";
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
  /** Text mode on a terminal: print the Lead's answer as it streams in. */
  streamAnswer?: boolean;
  /** stream-json: also print each streamed piece of an answer as an `assistant_delta` line. */
  includePartialMessages?: boolean;
}

/**
 * Everything `agent run` and `agent drain` print while they run: the Lead's,
 * teammates' and mailbox events to stdout as stream-json lines, progress to
 * stderr, then the result in the chosen format. In text mode stdout carries
 * nothing but the answer: on a terminal it streams in as the model writes it.
 */
export class RunOutput {
  readonly #o: RunOutputOptions;
  readonly #stdout: OrderedWriter;
  readonly #progress: ProgressPrinter;
  readonly #answer: AnswerStream | undefined;
  /**
   * Events from before start(): building the runtime restores the team (claims,
   * teammates starting) before the init line can be printed, and the init line
   * must come first. Held here, and dropped if the runtime never starts.
   */
  #early: unknown[] | undefined = [];

  constructor(options: RunOutputOptions) {
    this.#o = options;
    const streamAnswer = options.streamAnswer === true && options.format === "text";
    this.#stdout = new OrderedWriter(options.stdout);
    this.#answer = streamAnswer ? new AnswerStream((text) => this.#stdout.write(text)) : undefined;
    // While the answer streams, stdout and stderr share the terminal: progress
    // joins stdout's queue, so a line never lands inside an answer and a
    // spinner's erase never wipes a piece of one.
    const toStderr = async (text: string) => {
      options.stderr.write(text);
      await options.stderr.flush();
    };
    const write = streamAnswer ? (text: string) => this.#stdout.write(text, toStderr) : (text: string) => options.stderr.write(text);
    const spinner = options.animate && options.level !== "quiet" ? new Spinner(write) : undefined;
    this.#progress = new ProgressPrinter(write, options.level, spinner, () => !this.#answer?.midLine);
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
    if (this.#answer && AnswerStream.prints(event)) this.#progress.stop();
    this.#answer?.observe(event);
    this.#progress.observe(event);
    if (event.type === "assistant_delta" && !this.#o.includePartialMessages) return;
    // Token counts per answer are for the terminal's team view; the result line has the totals.
    if (event.type === "usage") return;
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
    else if (!result.isError && result.result.length > 0 && !this.#answer?.coversResult(result.result)) {
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
