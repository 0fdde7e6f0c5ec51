import type { RunEvent } from "../../runtime/run-types.ts";
import type { TeamEvent } from "../../team/teammate-runtime.ts";
import { TeamActivity, teamViewLines } from "../terminal/activity.ts";
import { type MarkdownOptions, MarkdownStream, renderMarkdown } from "../terminal/markdown.ts";
import { StatusBlock } from "../terminal/status-block.ts";
import { AnswerStream } from "./answer-stream.ts";
import { OrderedWriter } from "./ordered-writer.ts";
import { ProgressPrinter, type ProgressLevel } from "./progress.ts";
import type { OutputFormat, RunInfo } from "./result-json.ts";
import { type StreamEvent, type StreamShapes, agentShapes } from "./stream-shapes.ts";
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
  /** Whose shapes the json and stream-json lines take (default: ours). */
  shapes?: StreamShapes;
  /** stderr is a terminal: a live team view below the log instead of the spinner (src/cli/terminal/). */
  teamView?: { columns: () => number; colour: boolean };
  /** stdout is a terminal with colour: the answer's markdown rendered (src/cli/terminal/markdown.ts). */
  markdown?: MarkdownOptions;
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
  readonly #activity = new TeamActivity();
  readonly #render: (text: string) => string;
  readonly #block: StatusBlock | undefined;
  /**
   * Events from before start(): building the runtime restores the team (claims,
   * teammates starting) before the init line can be printed, and the init line
   * must come first. Held here, and dropped if the runtime never starts.
   */
  #early: StreamEvent[] | undefined = [];
  readonly #shapes: StreamShapes;
  /** A line to stderr in turn with the answer streaming to stdout (the same terminal). */
  readonly #log: (text: string) => void;
  /** A permission question owns the terminal: nothing animates, every write waits for the answer. */
  #asking = false;

  constructor(options: RunOutputOptions) {
    this.#o = options;
    this.#shapes = options.shapes ?? agentShapes(options.version);
    const streamAnswer = options.streamAnswer === true && options.format === "text";
    this.#stdout = new OrderedWriter(options.stdout);
    const toStdout = (text: string) => this.#stdout.write(text);
    const markdown = options.markdown && options.format === "text" ? options.markdown : undefined;
    this.#render = markdown ? (text: string) => renderMarkdown(text, markdown) : (text: string) => text;
    const rendered = markdown ? new MarkdownStream(toStdout, markdown) : undefined;
    this.#answer = streamAnswer ? new AnswerStream(rendered?.push ?? toStdout, rendered?.end) : undefined;
    // While the answer streams, stdout and stderr share the terminal: progress
    // joins stdout's queue, so a line never lands inside an answer and a
    // spinner's erase never wipes a piece of one.
    const toStderr = async (text: string) => {
      options.stderr.write(text);
      await options.stderr.flush();
    };
    const write = streamAnswer ? (text: string) => this.#stdout.write(text, toStderr) : (text: string) => options.stderr.write(text);
    this.#log = write;
    const view = options.teamView;
    if (view && options.level !== "quiet") {
      this.#block = new StatusBlock(write, {
        render: () => teamViewLines(this.#activity, Date.now()),
        columns: view.columns,
        mayDraw: () => !this.#answer?.midLine,
        ...(view.colour ? { style: (line: string) => `\x1b[2m${line}\x1b[0m` } : {}),
      });
      this.#block.start();
    }
    const block = this.#block;
    const spinner = !block && options.animate && options.level !== "quiet" ? new Spinner(write) : undefined;
    this.#progress = new ProgressPrinter(block ? (text) => block.log(text) : write, options.level, spinner, () => !this.#answer?.midLine && !this.#asking);
  }

  /** The first stream-json line, before the model is called. */
  start(info: RunInfo): void {
    const early = this.#early ?? [];
    this.#early = undefined;
    if (this.#o.format !== "stream-json") return;
    for (const line of this.#shapes.init(info)) this.#line(line);
    for (const event of early) for (const line of this.#shapes.event(event)) this.#line(line);
  }

  readonly observe = (event: RunEvent): void => {
    const prints = AnswerStream.prints(event);
    if (this.#answer && prints) {
      this.#progress.stop();
      this.#block?.hide();
    }
    this.#answer?.observe(event);
    this.#activity.observe(event);
    this.#progress.observe(event);
    if (event.type !== "assistant_delta") this.#block?.refresh();
    if (event.type === "assistant_delta" && !this.#o.includePartialMessages) return;
    // Token counts per answer are for the terminal's team view; the result line has the totals.
    // A batch's one stderr line repeats its `event` lines, which stream-json has already.
    if (event.type === "usage" || event.type === "event_turn") return;
    this.#event(event);
  };

  readonly observeTeam = (event: TeamEvent): void => {
    this.#activity.observeTeam(event);
    this.#progress.observeTeam(event);
    this.#block?.refresh();
    this.#event(event);
  };

  #event(event: RunEvent | TeamEvent): void {
    if (this.#o.format !== "stream-json") return;
    if (this.#early) this.#early.push(event);
    else for (const line of this.#shapes.event(event)) this.#line(line);
  }

  /** A setup warning (stderr already has it): a `warning` line of stream-json, after the init line. */
  setupWarning(agent: string, message: string): void {
    this.#event({ type: "warning", agent, message });
  }

  /** A line for the user on stderr (not with --quiet): what is left to do, or that there was nothing. */
  note(text: string): void {
    this.stopProgress();
    if (this.#o.level !== "quiet") this.#log(`agent: ${text}\n`);
  }

  /**
   * Runs `ask` (a question on the terminal, answered from stdin) with the
   * terminal to itself: the status block and spinner are taken off the screen
   * and stay off, everything else printed meanwhile (progress, a streaming
   * answer) is held and printed after the answer, then the block comes back.
   * Without this the block's next redraw erased the question it sat below.
   */
  async whileAsking<T>(ask: () => Promise<T>): Promise<T> {
    this.#asking = true;
    this.#progress.stop();
    this.#block?.suspend();
    let answered!: () => void;
    const done = new Promise<void>((resolve) => (answered = resolve));
    try {
      // The erase goes out before the question is written.
      await Promise.all([this.#stdout.flush().catch(() => {}), this.#o.stderr.flush().catch(() => {})]);
      this.#stdout.holdUntil(done);
      this.#o.stderr.holdUntil(done);
      return await ask();
    } finally {
      this.#asking = false;
      answered();
      this.#block?.resume();
    }
  }

  /** Stops the spinner; call as soon as the run is over, before anything else is printed. */
  stopProgress(): void {
    this.#progress.stop();
    this.#block?.clear();
    // An answer cut short (Ctrl-C, --timeout) ends its line: what follows starts on a fresh one.
    this.#answer?.endLine();
  }

  /** A user turn's own result line, while the command goes on (stream-json only). */
  turnResult(outcome: TeamOutcome, info: RunInfo): void {
    if (this.#o.format !== "stream-json") return;
    for (const line of this.#shapes.result(outcome, info)) this.#line(line);
  }

  /** Prints the result and waits until stdout has it. Text mode prints nothing for a failed run: its error line says it. */
  async finish(outcome: TeamOutcome, info: RunInfo): Promise<void> {
    this.stopProgress();
    const { result } = outcome;
    if (this.#o.format === "json") this.#line(agentShapes(this.#o.version).result(outcome, info)[0]);
    else if (this.#o.format === "stream-json") for (const line of this.#shapes.result(outcome, info)) this.#line(line);
    else if (!result.isError && result.result.length > 0 && !this.#answer?.coversResult(result.result)) {
      this.#stdout.write(this.#render(result.result.endsWith("\n") ? result.result : `${result.result}\n`));
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
