import type { Readable, Writable } from "node:stream";
import { defineCommand } from "citty";
import { SessionInterruptedError } from "../../core/errors.ts";
import { uuidV7Source } from "../../core/ids.ts";
import { LEAD, USER } from "../../core/agent-name.ts";
import type { MailboxMessage } from "../../core/message.ts";
import type { PermissionAsker } from "../../permissions/policy.ts";
import { type Palette, paletteFor } from "../../permissions/preview.ts";
import { askPermission, permissionQuestion } from "../../permissions/tty-asker.ts";
import { globalArgs } from "../args.ts";
import type { RunEvent } from "../../runtime/run-types.ts";
import { AnswerStream } from "../run/answer-stream.ts";
import { ProgressPrinter } from "../run/progress.ts";
import { type RuntimeSetup, runtimeArgs, runtimeSetup, sessionArgs } from "../run/runtime-args.ts";
import { withRuntime } from "../run/runtime.ts";
import { RunStop } from "../run/stop.ts";
import { leftForDrain } from "../run/team-outcome.ts";
import { askTrustOnTerminal } from "../trust-question.ts";
import { VERSION } from "../version.ts";
import type { TeamEvent } from "../../team/teammate-runtime.ts";
import { TeamActivity, teamViewLines } from "../terminal/activity.ts";
import { terminalColumns } from "../terminal/columns.ts";
import { terminalHyperlinks } from "../terminal/hyperlinks.ts";
import { MarkdownStream, renderMarkdown } from "../terminal/markdown.ts";
import { type Channel, Screen } from "../terminal/screen.ts";
import { LeadSession } from "./lead-session.ts";
import { type SessionViews, completeLine, runSlashCommand } from "./slash-commands.ts";
import { TeamViews } from "./team-views.ts";
import { pickAgent } from "./team-picker.ts";
import { historyTailOf } from "../../follow/history-tail.ts";
import type { HistoryBackend } from "../../runtime/history-store.ts";
import { visibleControls } from "../../security/terminal-text.ts";
import { SessionInput } from "./session-input.ts";

/** `agent` with no command, on a terminal: an interactive session with the Lead. */
export const sessionCommand = defineCommand({
  meta: { name: "agent", description: "Interactive session with the Lead" },
  args: { ...sessionArgs, ...runtimeArgs, ...globalArgs },
  async run({ args, rawArgs }) {
    await askTrustOnTerminal(args);
    await interactiveSession(runtimeSetup(args, rawArgs), {
      stdin: process.stdin,
      stdout: process.stdout,
      stderr: process.stderr,
      terminal: true,
      verbose: args.verbose === true,
    });
  },
});

export interface SessionIo {
  stdin: Readable;
  stdout: Writable;
  stderr: Writable;
  terminal: boolean;
  verbose: boolean;
}

/**
 * Owns the state dir for the session (a second runtime is refused, exit 4),
 * restores the team, and talks with the Lead until the input ends. Answers go
 * to stdout; the prompt, progress and teammates' state changes to stderr.
 * Permission questions are asked through the session's own input, so a y/n is
 * never taken for a request.
 */
export async function interactiveSession(setup: RuntimeSetup, io: SessionIo): Promise<void> {
  const activity = new TeamActivity();
  // Known once the runtime is built (restored teammates included).
  let teammates: () => string[] = () => [];
  const stdoutTty = io.stdout as { isTTY?: boolean; columns?: number };
  const stderrTty = io.stderr as { isTTY?: boolean; columns?: number };
  // Every write to the terminal goes through its one owner: answers, notes, questions and the prompt.
  const channels: Channel[] = io.terminal ? [...(stdoutTty.isTTY === true ? (["out"] as const) : []), ...(stderrTty.isTTY === true ? (["err"] as const) : [])] : [];
  const screen = new Screen((text, channel) => (channel === "out" ? io.stdout : io.stderr).write(text), {
    columns: () => terminalColumns(stderrTty),
    channels,
  });
  const input = new SessionInput({
    input: io.stdin,
    output: io.stderr,
    screen,
    terminal: io.terminal,
    completer: (line) => completeLine(line, () => teammates()),
  });
  // Known once the runtime is built: the session's histories, which a teammate's view follows.
  let histories: HistoryBackend | undefined;
  // The main pane shows the Lead, or a teammate picked with /view, /team or Ctrl-T (the Lead's output held meanwhile).
  const views = new TeamViews({
    screen,
    teammates: () => teammates(),
    history: (name) => historyTailOf(histories!, name),
    columns: () => terminalColumns(stdoutTty),
    beforeSwitch: () => answer?.endLine(),
  });
  const leadOut = views.lead;
  // The answer to what the user typed streams in as the model writes it (no
  // prompt is waiting then); event turns print theirs whole, above the prompt.
  const toStdout = (text: string) => leadOut.write(text, "out");
  // Markdown rendered only for a terminal with colour (NO_COLOR, TERM=dumb and pipes get the text as written).
  const markdown = io.terminal && stdoutTty.isTTY === true && (process.env.NO_COLOR ?? "") === "" && process.env.TERM !== "dumb";
  const layout = { columns: () => terminalColumns(stdoutTty), hyperlinks: terminalHyperlinks(process.env) };
  // A model's or a teammate's text on the terminal: its control characters shown, never obeyed; piped, as written.
  const shown = (text: string) => (io.terminal && stdoutTty.isTTY === true ? visibleControls(text) : text);
  const rendered = markdown ? new MarkdownStream(toStdout, layout) : undefined;
  const answer = io.terminal ? new AnswerStream(rendered?.push ?? toStdout, rendered?.end) : undefined;
  // A note starts on a line of its own: an answer cut by Ctrl-C or a broken stream is ended first.
  const err = (text: string) => {
    answer?.endLine();
    leadOut.endLine();
    leadOut.message(text, "err");
  };
  // What the user asked for (a command's output) and questions' notes: shown whatever is in view.
  const say = (text: string) => {
    answer?.endLine();
    screen.endLine();
    screen.message(text, "err");
  };
  // Progress lines never end a row of the answer: the screen prints them once the row is complete.
  const progress = new ProgressPrinter((text) => leadOut.message(text, "err"), io.verbose ? "verbose" : "normal");
  let session: LeadSession | undefined;
  let live: { refresh(): void; stop(): void } | undefined;
  const observe = (event: RunEvent) => {
    if (answer && session?.inUserTurn) answer.observe(event);
    progress.observe(event);
    activity.observe(event);
    if (event.type !== "assistant_delta" && event.type !== "tool_input_delta" && event.type !== "thinking_delta") live?.refresh();
  };
  let replies: ((id: string) => Promise<MailboxMessage | undefined>) | undefined;
  const observeTeam = (event: TeamEvent) => {
    progress.observeTeam(event);
    activity.observeTeam(event);
    live?.refresh();
    // A teammate's answer to the user's own `@name` message comes to the user, not the Lead: show it.
    if (event.type === "mailbox" && event.op === "send" && event.agent === USER && replies) {
      void replies(event.id).then(
        (message) => {
          if (message === undefined) return;
          leadOut.message(`${event.from}: ${shown(message.content)}`, "out");
        },
        (error: unknown) => err(`agent: could not read ${event.from}'s answer ${event.id}: ${(error as Error).message}\n`),
      );
    }
  };
  for (const warning of setup.warnings) err(`agent: warning: ${warning}\n`);
  // On a terminal: the team below the log (once there is one), Ctrl-T to cycle the view.
  live = io.terminal ? liveTeam(screen, activity, views, input, say, (stderrTty.isTTY === true && (process.env.NO_COLOR ?? "") === "") || false) : undefined;
  using stop = new RunStop(undefined);
  // SIGTERM or a lost lock ends the session as Ctrl-D would.
  stop.signal.addEventListener("abort", () => input.close(), { once: true });
  // `/new` ends the session's runtime and opens a new session on the same input.
  let plan: RuntimeSetup["session"] | undefined = setup.session;
  /** Ctrl-C twice during a turn: the session ends as an interrupted run (exit 130), after closing cleanly. */
  let interrupted = false;
  try {
    while (plan !== undefined) {
      const current: RuntimeSetup = { ...setup, session: plan };
      plan = undefined;
      const ending: { then: "exit" | "new" } = { then: "exit" };
      await withRuntime({ setup: current, stop, observer: observe, teamObserver: observeTeam, asker: sessionAsker(input, say, paletteFor(io.stderr as { isTTY?: boolean })) }, async (lead, opened) => {
        const name = opened.meta.name === undefined ? "" : ` (${opened.meta.name})`;
        err(`agent ${VERSION}: session ${opened.meta.id}${name} with the Lead in ${setup.workspace}; "exit" or Ctrl-D ends it\n`);
        teammates = () => lead.team.list().map((record) => record.name);
        replies = (id) => lead.team.message(id);
        histories = lead.files.histories;
        session = new LeadSession({
          lead,
          input,
          answer: (text) => leadOut.message(markdown ? renderMarkdown(text, layout) : shown(text), "out"),
          note: err,
          ids: uuidV7Source,
          streamed: (result) => answer?.coversResult(result) ?? false,
          command: (line) =>
            runSlashCommand(line, {
              lead,
              activity,
              stateDir: opened.dir,
              workspace: setup.workspace,
              print: say,
              ...(io.terminal ? { views: sessionViews(screen, input, views, say, () => terminalColumns(stderrTty)) } : {}),
              leave: (next) => {
                ending.then = next;
              },
              session: { id: opened.meta.id, root: setup.stateRoot, store: setup.settings.store },
            }),
          turnEnded: () => activity.leadIdle(),
          onAccepted: (request) => opened.accepted(request),
        });
        await session.run();
        // Back to the Lead before anything else is said: what it printed meanwhile is not lost.
        await views.close();
        if (session.forcedExit) interrupted = true;
        const left = leftForDrain(lead.team.list(), lead.inbox.size, opened.meta.id);
        if (left !== undefined) err(`agent: session ended: ${left}\n`);
      });
      if (ending.then === "new" && !stop.signal.aborted && !interrupted) {
        plan = { kind: "new" };
        activity.reset();
      }
    }
  } finally {
    live?.stop();
    input.close();
  }
  if (interrupted) throw new SessionInterruptedError();
}

/**
 * The session's live team view: the status block below the log lists the Lead
 * and each teammate (nothing while there are none) and which one is in view,
 * redrawn every second; Ctrl-T cycles the view. stop() takes both away.
 */
function liveTeam(
  screen: Screen,
  activity: TeamActivity,
  views: TeamViews,
  input: SessionInput,
  say: (text: string) => void,
  colour: boolean,
): { refresh(): void; stop(): void } {
  // Only a block with lines is redrawn: a session with the Lead alone keeps its prompt untouched.
  const refresh = () => {
    if (activity.list().length > 1) screen.refresh();
  };
  screen.setStatus({
    render: () => {
      // Nothing until there is a team: a session with the Lead alone looks as it always did.
      if (activity.list().length <= 1) return [];
      const lines = teamViewLines(activity, Date.now());
      const viewing = views.viewing;
      return [...lines, viewing === LEAD ? "Ctrl-T or /team: view a teammate" : `viewing ${viewing} (Ctrl-T: next, /view lead: back)${views.heldCount > 0 ? `; the Lead has ${views.heldCount} held` : ""}`];
    },
    ...(colour ? { style: (line: string) => `\x1b[2m${line}\x1b[0m` } : {}),
  });
  const timer = setInterval(refresh, 1000);
  timer.unref?.();
  const release = input.takeKeys((key) => {
    if (!(key.ctrl && key.name === "t") || screen.asking) return false;
    try {
      if (activity.list().length <= 1 && views.viewing === LEAD) say("agent: no teammate to view yet\n");
      else views.next();
    } catch (error) {
      say(`agent: ${(error as Error).message}\n`);
    }
    screen.refresh();
    return true;
  });
  return {
    refresh,
    stop() {
      clearInterval(timer);
      release();
      screen.clearStatus();
    },
  };
}

/** /team's list and /view on a terminal: the picked agent goes in view. */
function sessionViews(screen: Screen, input: SessionInput, views: TeamViews, say: (text: string) => void, columns: () => number): SessionViews {
  const show = (name: string) => {
    views.show(name);
    screen.refresh();
  };
  return {
    show,
    pick(rows) {
      void pickAgent(screen, input, rows, { columns, selected: views.viewing }).then(
        (name) => {
          if (name === undefined) return;
          try {
            show(name);
          } catch (error) {
            say(`agent: ${(error as Error).message}\n`);
          }
        },
        (error: unknown) => say(`agent: /team failed: ${(error as Error).message}\n`),
      );
    },
  };
}

function sessionAsker(input: SessionInput, note: (text: string) => void, palette: Palette): PermissionAsker {
  return (request, signal) => {
    // Shown above a half-typed line: the question without its last line (the choices), which it is asked with later.
    const question = permissionQuestion(request, palette);
    const notice = question.slice(0, question.lastIndexOf("\n") + 1);
    return input.exclusive(() => askPermission(request, (prompt, answer) => input.ask(prompt, signal, answer === "key"), note, palette), signal, notice);
  };
}
