import type { RunEvent } from "../../runtime/run-types.ts";
import { visibleControls } from "../../security/terminal-text.ts";
import type { TeamEvent } from "../../team/teammate-runtime.ts";
import { TeamActivity, teamViewLines } from "../terminal/activity.ts";
import { type MarkdownOptions, MarkdownStream, renderMarkdown } from "../terminal/markdown.ts";
import { type Channel, Screen } from "../terminal/screen.ts";
import { StatusBlock } from "../terminal/status-block.ts";
import { AnswerStream } from "./answer-stream.ts";
import { OrderedWriter } from "./ordered-writer.ts";
import { ProgressPrinter, type ProgressLevel } from "./progress.ts";
import { type OutputFormat, type RunInfo, unknownPrice } from "./result-json.ts";
import { type StreamEvent, type StreamShapes, agentShapes } from "./stream-shapes.ts";
import type { TeamOutcome } from "./team-outcome.ts";

export interface RunOutputOptions {
  format: OutputFormat;
  level: ProgressLevel;
  stdout: (text: string) => Promise<void>;
  stderr: OrderedWriter;
  /** Which of stdout and stderr are the terminal (one screen: src/cli/terminal/screen.ts). */
  terminal?: { stdout: boolean; stderr: boolean };
  version: string;
  /** Text mode on a terminal: print the Lead's answer as it streams in. */
  streamAnswer?: boolean;
  /** stream-json: also print each streamed piece of an answer as an `assistant_delta` line. */
  includePartialMessages?: boolean;
  /** Whose shapes the json and stream-json lines take (default: ours). */
  shapes?: StreamShapes;
  /** stderr is a terminal: a live team view below the log (src/cli/terminal/). */
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
/** The events that are pieces of an answer as it streams in (--include-partial-messages). */
const PARTIAL: ReadonlySet<RunEvent["type"]> = new Set(["assistant_delta", "tool_input_delta", "thinking_delta"]);

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
  /** The terminal's one owner: the answer, progress, the status block and questions all go through it. */
  readonly #screen: Screen;

  constructor(options: RunOutputOptions) {
    this.#o = options;
    this.#shapes = options.shapes ?? agentShapes(options.version);
    const streamAnswer = options.streamAnswer === true && options.format === "text";
    this.#stdout = new OrderedWriter(options.stdout);
    // While the answer streams, stdout and stderr share the terminal: stderr's
    // text joins stdout's queue, so the screen's bytes go out in the order it
    // made them, whichever stream they are for.
    const toStderr = async (text: string) => {
      options.stderr.write(text);
      await options.stderr.flush();
    };
    const terminal = options.terminal ?? { stdout: false, stderr: false };
    const shared = streamAnswer || (terminal.stdout && terminal.stderr);
    const sink = (text: string, channel: Channel) => {
      if (channel === "out") this.#stdout.write(text);
      else if (shared) this.#stdout.write(text, toStderr);
      else options.stderr.write(text);
    };
    const channels: Channel[] = [...(terminal.stdout ? (["out"] as const) : []), ...(terminal.stderr ? (["err"] as const) : [])];
    const view = options.teamView;
    this.#screen = new Screen(sink, { columns: view?.columns ?? options.markdown?.columns ?? (() => 80), channels });
    const toScreen = (text: string) => this.#screen.write(text, "out");
    const markdown = options.markdown && options.format === "text" ? options.markdown : undefined;
    this.#render = markdown ? (text: string) => renderMarkdown(text, markdown) : (text: string) => text;
    const rendered = markdown ? new MarkdownStream(toScreen, markdown) : undefined;
    this.#answer = streamAnswer ? new AnswerStream(rendered?.push ?? toScreen, rendered?.end) : undefined;
    if (view && options.level !== "quiet") {
      this.#block = new StatusBlock(this.#screen, {
        render: () => teamViewLines(this.#activity, Date.now()),
        ...(view.colour ? { style: (line: string) => `\x1b[2m${line}\x1b[0m` } : {}),
      });
      this.#block.start();
    }
    this.#progress = new ProgressPrinter((text) => this.#screen.message(text, "err"), options.level);
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
    this.#answer?.observe(event);
    this.#activity.observe(event);
    this.#progress.observe(event);
    const partial = PARTIAL.has(event.type);
    if (!partial) this.#screen.refresh();
    // An answer's pieces, and its end (`usage`: Claude's partial messages close the message with it), only when asked for.
    if ((partial || event.type === "usage") && !this.#o.includePartialMessages) return;
    // A batch's one stderr line repeats its `event` lines, which stream-json has already.
    if (event.type === "event_turn") return;
    this.#event(event);
  };

  readonly observeTeam = (event: TeamEvent): void => {
    this.#activity.observeTeam(event);
    this.#progress.observeTeam(event);
    this.#screen.refresh();
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

  /** A warning line on stderr while the run goes on (not with --quiet), through the screen like every other line. */
  warn(text: string): void {
    if (this.#o.level !== "quiet") this.#screen.message(`agent: warning: ${text}\n`, "err");
  }

  /** A line for the user on stderr (not with --quiet): what is left to do, or that there was nothing. */
  note(text: string): void {
    this.stopProgress();
    if (this.#o.level !== "quiet") this.#screen.message(`agent: ${text}\n`, "err");
  }

  /**
   * Runs `ask` (a question on the terminal, answered from stdin) with the
   * terminal to itself (Screen.question): the status block off the screen and
   * not redrawn, everything else printed meanwhile held and printed after the
   * answer, then the block back. `ask` prints the question through `write`.
   */
  whileAsking<T>(ask: (write: (text: string) => void) => Promise<T>): Promise<T> {
    return this.#screen.question(async (write) => {
      // What the screen wrote before the question (the block's erase) goes out first.
      await Promise.all([this.#stdout.flush().catch(() => {}), this.#o.stderr.flush().catch(() => {})]);
      return ask(write);
    });
  }

  /** Stops the status block; call as soon as the run is over, before anything else is printed. */
  stopProgress(): void {
    this.#block?.clear();
    // An answer cut short (Ctrl-C, --timeout) ends its line: what follows starts on a fresh one.
    this.#answer?.endLine();
    this.#screen.endLine();
  }

  /** A user turn's own result line, while the command goes on (stream-json only). */
  turnResult(outcome: TeamOutcome, info: RunInfo): void {
    if (this.#o.format !== "stream-json") return;
    for (const line of this.#shapes.result(outcome, info)) this.#line(line);
  }

  /**
   * Prints the result and waits until stdout has it. Text mode prints nothing for a failed run: its error line says it;
   * stream-json nothing with `print.result` false, each turn's having been printed.
   */
  async finish(outcome: TeamOutcome, info: RunInfo, print: { result: boolean } = { result: true }): Promise<void> {
    this.stopProgress();
    const { result } = outcome;
    // The result says it has no cost; the user is told once why, and what fixes it.
    if (this.#o.format !== "text" && outcome.usage?.total.costUsd === undefined) this.warn(unknownPrice(info.model));
    if (this.#o.format === "json") this.#line(agentShapes(this.#o.version).result(outcome, info)[0]);
    // Not when every turn's result was printed as it ended (a driving SDK counts one per turn).
    else if (this.#o.format === "stream-json") {
      if (print.result) for (const line of this.#shapes.result(outcome, info)) this.#line(line);
    }
    else if (!result.isError && result.result.length > 0 && !this.#answer?.coversResult(result.result)) {
      // On a terminal the model's text is shown, not obeyed (the renderer does it for markdown); piped, it is the answer as written.
      const text = result.result.endsWith("\n") ? result.result : `${result.result}\n`;
      this.#screen.message(this.#render(this.#o.terminal?.stdout ? visibleControls(text) : text), "out");
    }
    await this.#stdout.flush();
  }

  #line(value: unknown): void {
    this.#screen.message(`${JSON.stringify(value)}\n`, "out");
  }
}
