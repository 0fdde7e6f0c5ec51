import type { StoreSelection } from "../../store/store-url.ts";
import { openSessionViews } from "../store/session-stores.ts";
import { describeState, listedState } from "../../sessions/session-status.ts";
import { SessionStore } from "../../sessions/session-store.ts";
import { formatTable } from "../output.ts";
import { clip } from "../run/progress.ts";
import type { LeadRuntime } from "../../app/lead.ts";
import { TodoList } from "../../todos/todo-list.ts";
import { taskLines } from "../../tools/task-text.ts";
import { type TeamActivity, activityLine } from "../terminal/activity.ts";
import type { PickerRow } from "./team-picker.ts";

export interface SlashContext {
  lead: Pick<LeadRuntime, "team" | "policy" | "modelChoice" | "runner" | "tasks" | "files">;
  /** The workspace the agents' files are in (`/rewind`). */
  workspace?: string;
  activity: TeamActivity;
  stateDir: string;
  /** Where command output goes (stderr, above the prompt). */
  print: (text: string) => void;
  /** Ends the session (`/exit`), or ends it and starts a new one (`/new`). */
  leave: (then: "exit" | "new") => void;
  /** The session in use, the state root its siblings live in and the store their work is in (`/sessions`). */
  session?: { id: string; root: string; store?: StoreSelection };
  /** On a terminal: the /team list to browse, and switching the view (`/view`). */
  views?: SessionViews;
  now?: () => number;
}

/** What `/team` and `/view` ask of the session's screen. */
export interface SessionViews {
  /** Opens the team as a list to move through (it returns at once); Enter there views the agent picked. */
  pick(rows: PickerRow[]): void;
  /** Shows `name`'s stream in the main pane (`lead`: the Lead's); an unknown name throws, naming the known ones. */
  show(name: string): void;
}

interface SlashCommand {
  usage: string;
  help: string;
  /** "end" ends the session's loop. */
  run(context: SlashContext, argument: string): Promise<void | "end"> | void | "end";
}

/** Who sends what the user types as `@name text`: not an agent, so replies go to the Lead as results do. */
export const USER_SENDER = "user";

const COMMANDS: Record<string, SlashCommand> = {
  help: { usage: "/help", help: "these commands", run: (c) => c.print(helpText()) },
  team: { usage: "/team", help: "the Lead and the teammates: state, current tool, time, tokens; on a terminal, pick one to view", run: showTeam },
  tasks: { usage: "/tasks", help: "the shared task graph", run: showTasks },
  todos: { usage: "/todos", help: "the Lead's todo list", run: showTodos },
  compact: { usage: "/compact", help: "summarise the Lead's older history now", run: compactNow },
  model: { usage: "/model [NAME]", help: "show the model, or use NAME for every agent's next requests", run: switchModel },
  permissions: { usage: "/permissions", help: "the permission mode and rules, with those added by a/N answers", run: showPermissions },
  changes: { usage: "/changes [--diff]", help: "what the agents changed in files (agent changes)", run: showChanges },
  rewind: { usage: "/rewind N [--force]", help: "files back as before the Lead's turn N (agent rewind --to N)", run: rewindNow },
  view: { usage: "/view NAME", help: "show teammate NAME's stream (the Lead's output held meanwhile); /view lead comes back (also Ctrl-T)", run: viewAgent },
  sessions: { usage: "/sessions", help: "the sessions of this state root, this one marked *", run: showSessions },
  new: {
    usage: "/new",
    help: "end this session (the team stops; its work stays for drain) and start a new one",
    run: (c) => {
      c.leave("new");
      return "end";
    },
  },
  exit: {
    usage: "/exit",
    help: "end the session (also exit, Ctrl-D)",
    run: (c) => {
      c.leave("exit");
      return "end";
    },
  },
};

export function commandNames(): string[] {
  return Object.keys(COMMANDS).map((name) => `/${name}`);
}

function helpText(): string {
  const width = Math.max(...Object.values(COMMANDS).map((command) => command.usage.length), "@NAME TEXT".length);
  const lines = Object.values(COMMANDS).map((command) => `  ${command.usage.padEnd(width)}  ${command.help}`);
  lines.push(`  ${"@NAME TEXT".padEnd(width)}  send TEXT to teammate NAME (its result comes back to the Lead)`);
  return `${lines.join("\n")}\n`;
}

/**
 * Runs a line that is a session command (`/name …`) or a message to a teammate
 * (`@name text`); returns false for anything else (a request for the Lead).
 * Failures are printed, never thrown: a typo must not end the session.
 */
export async function runSlashCommand(line: string, context: SlashContext): Promise<boolean | "end"> {
  const text = line.trim();
  if (text.startsWith("@")) {
    await sendToTeammate(context, text);
    return true;
  }
  // A request may start with a path (`/usr/lib/x is broken`): only a lone `/word` is a command.
  if (!/^\/[A-Za-z-]*(\s|$)/.test(text)) return false;
  const [word = "", ...rest] = text.slice(1).split(/\s+/);
  const command = COMMANDS[word];
  if (!command) {
    context.print(`agent: unknown command /${word}; the commands are ${commandNames().join(", ")} and @NAME TEXT\n`);
    return true;
  }
  try {
    if ((await command.run(context, rest.join(" "))) === "end") return "end";
  } catch (error) {
    context.print(`agent: /${word} failed: ${(error as Error).message}\n`);
  }
  return true;
}

/** Tab completion (readline's completer): command names after `/`, teammate names after `@`. */
export function completeLine(line: string, teammates: () => string[]): [string[], string] {
  if (/^\/\S*$/.test(line)) {
    const hits = commandNames().filter((name) => name.startsWith(line));
    return [hits.length > 0 ? hits.map((hit) => `${hit} `) : commandNames(), line];
  }
  if (/^@\S*$/.test(line)) {
    const names = teammates().map((name) => `@${name}`);
    const hits = names.filter((name) => name.startsWith(line));
    return [hits.length > 0 ? hits.map((hit) => `${hit} `) : names, line];
  }
  return [[], line];
}

function showTeam(context: SlashContext): void {
  const now = (context.now ?? Date.now)();
  const lead = context.activity.get("lead");
  const rows: PickerRow[] = lead ? [{ name: "lead", line: activityLine(lead, now) }] : [];
  /** The plain listing: each row, a failed teammate's reason on a line of its own. */
  const plain = rows.map((row) => row.line);
  const notes: string[] = [];
  const teammates = context.lead.team.list();
  for (const record of teammates) {
    const seen = context.activity.get(record.name);
    const since = seen?.since ?? Date.parse(record.updatedAtUtc);
    const line = activityLine(
      {
        name: record.name,
        role: record.role,
        state: record.state,
        ...(record.state === "running" && seen?.doing ? { doing: seen.doing } : {}),
        since,
        tokens: seen?.tokens ?? 0,
      },
      now,
    );
    rows.push({ name: record.name, line: record.failure ? `${line}  failed: ${record.failure}` : line });
    plain.push(line, ...(record.failure ? [`  failed: ${record.failure}`] : []));
  }
  if (teammates.length === 0) notes.push("no teammates yet");
  const waiting = context.activity.waitingEvents;
  if (waiting > 0) notes.push(`${waiting} event${waiting === 1 ? "" : "s"} waiting for the Lead`);
  // On a terminal with teammates: a list to move through and pick one to view.
  if (context.views && teammates.length > 0) {
    if (notes.length > 0) context.print(`${notes.join("\n")}\n`);
    context.views.pick(rows);
    return;
  }
  context.print(`${[...plain, ...notes].join("\n")}\n`);
}

function viewAgent(context: SlashContext, argument: string): void {
  const name = argument.trim();
  if (!context.views) {
    context.print("agent: /view needs a terminal; `agent sessions show ID --follow --agent NAME` follows a teammate anywhere\n");
    return;
  }
  if (name === "") {
    context.print(`agent: /view needs a name: /view lead, or one of ${context.lead.team.list().map((t) => t.name).join(", ") || "(no teammates yet)"}\n`);
    return;
  }
  context.views.show(name);
}

async function showTasks(context: SlashContext): Promise<void> {
  // The runtime's own task graph: the session's store, files or PostgreSQL.
  const tasks = await context.lead.tasks.list();
  context.print(tasks.length === 0 ? "no tasks\n" : `${taskLines(tasks)}\n`);
}

function showTodos(context: SlashContext): void {
  const todos = new TodoList(context.stateDir, "lead").todos;
  const mark: Record<string, string> = { pending: "[ ]", in_progress: "[>]", completed: "[x]" };
  context.print(todos.length === 0 ? "the todo list is empty\n" : `${todos.map((todo) => `${mark[todo.status]} ${todo.content}`).join("\n")}\n`);
}

async function showChanges(context: SlashContext, argument: string): Promise<void> {
  const { listChanges, changesText } = await import("../files/changes.ts");
  const listing = await listChanges(context.lead.files.ledger.backend, context.lead.files.histories, { diff: argument.split(/\s+/).includes("--diff") });
  context.print(changesText(listing, context.session?.id ?? "this session"));
}

async function rewindNow(context: SlashContext, argument: string): Promise<void> {
  const words = argument.split(/\s+/).filter(Boolean);
  const to = words.find((word, at) => !word.startsWith("--") && words[at - 1] !== "--include-guarded");
  if (to === undefined || context.workspace === undefined) {
    context.print("usage: /rewind N [--force] [--dry-run] [--include-guarded PATH] (N: the Lead's turn, as /changes shows it)\n");
    return;
  }
  const [{ rewindFiles, rewindText }, { rewindWriter }] = await Promise.all([import("../files/rewind-files.ts"), import("../files/rewind-writer.ts")]);
  const dryRun = words.includes("--dry-run");
  const history = context.lead.runner?.history;
  // `--include-guarded PATH`: the person at the terminal names a guarded file to put back.
  const named = words.flatMap((word, at) => (word === "--include-guarded" && words[at + 1] !== undefined ? [words[at + 1]!] : []));
  const outcome = await rewindFiles({
    ledger: context.lead.files.ledger,
    histories: context.lead.files.histories,
    writer: rewindWriter({ workspace: context.workspace, stateRoot: context.session?.root ?? context.stateDir, named }),
    to,
    dryRun,
    force: words.includes("--force"),
    note: async (text, at) => {
      await history?.appendMessages([{ role: "user", content: text }], at);
    },
  });
  context.print(rewindText(outcome, dryRun, context.session?.id ?? "this session"));
}

async function compactNow(context: SlashContext): Promise<void> {
  context.print("compacting the Lead's history…\n");
  const summarised = await context.lead.runner.compactNow();
  context.print(summarised > 0 ? `compacted: ${summarised} message(s) summarised\n` : "nothing to summarise yet\n");
}

function switchModel(context: SlashContext, name: string): void {
  if (name.trim() === "") {
    context.print(`model: ${context.lead.modelChoice.model}\n`);
    return;
  }
  context.lead.modelChoice.use(name);
  context.print(`model: ${context.lead.modelChoice.model} from the next request on (the Lead and every teammate)\n`);
}

function showPermissions(context: SlashContext): void {
  const { policy } = context.lead;
  const rules = policy.rules();
  const list = (items: string[]) => (items.length === 0 ? "(none)" : items.join(", "));
  context.print(
    [
      `mode: ${policy.mode}`,
      `allow: ${list(rules.allow)}`,
      `deny: ${list(rules.deny)}`,
      `added this session (a): ${list(rules.session.allow)}`,
      `denied this session (N): ${list(rules.session.deny)}`,
    ].join("\n") + "\n",
  );
}

async function showSessions(context: SlashContext): Promise<void> {
  if (!context.session) {
    context.print("no sessions here\n");
    return;
  }
  const store = new SessionStore(context.session.root);
  const rows: string[][] = [];
  // Their pending work is where the runs keep it: the files, or a PostgreSQL store's rows.
  const selection = context.session.store;
  const views = selection?.kind === "postgres" ? await openSessionViews(selection) : undefined;
  try {
    for (const meta of store.list()) {
      const dir = store.dirOf(meta.id);
      const state = await listedState(store, meta, views?.of({ dir, id: meta.id }));
      const mark = meta.id === context.session.id ? "*" : " ";
      const prompt = meta.firstPrompt === undefined ? "-" : clip(meta.firstPrompt, 40);
      rows.push([`${mark} ${meta.id}`, meta.name ?? "-", meta.lastUsedAtUtc, describeState(state), prompt]);
    }
  } finally {
    await views?.close();
  }
  context.print(formatTable([["  ID", "NAME", "LAST USED (UTC)", "STATE", "FIRST PROMPT"], ...rows]));
}

async function sendToTeammate(context: SlashContext, text: string): Promise<void> {
  const match = /^@(\S+)\s+([\s\S]+)$/.exec(text);
  if (!match) {
    context.print("agent: write @NAME and the message, e.g. @alice run the tests again\n");
    return;
  }
  const [, name = "", content = ""] = match;
  try {
    const message = await context.lead.team.send(USER_SENDER, name, content.trim());
    context.print(`sent to ${name} (${message.id})\n`);
  } catch (error) {
    context.print(`agent: could not send to ${name}: ${(error as Error).message}\n`);
  }
}
