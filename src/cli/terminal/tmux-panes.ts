import type { StoreSelection } from "../../store/store-url.ts";
import type { TeamEvent } from "../../team/teammate-runtime.ts";
import { selfCommand } from "../self-command.ts";

/** What the panes need to know of the run: where the follower command finds the session. */
export interface TeammatePanesContext {
  sessionId: string;
  stateRoot: string;
  workspace: string;
  store: StoreSelection;
  /** The environment tmux is reached through ($TMUX, $TMUX_PANE). */
  env: Record<string, string | undefined>;
  /** Told when a tmux command failed (once per failure; the run goes on without that pane). */
  warn: (text: string) => void;
}

/** The line said when panes are asked for outside tmux; the run goes on without them. */
export const PANES_NEED_TMUX = "--teammate-panes tmux needs to run inside tmux ($TMUX is not set): teammates get no panes";

/**
 * One tmux pane per teammate, running `agent sessions show ID --follow --agent
 * NAME` beside this process's own pane: the first split to the right of it, the
 * others stacked under that one, the focus left where it was. Each pane's id is
 * kept from its split, and close() kills exactly those panes (a pane whose
 * follower already ended is gone, and killing it again is harmless). tmux
 * commands run one after another, off the event that asked for them.
 */
export class TmuxPanes {
  readonly #panes = new Map<string, Promise<string | undefined>>();
  #last: Promise<string | undefined> | undefined;
  #queue: Promise<unknown> = Promise.resolve();
  #closed = false;

  constructor(readonly context: TeammatePanesContext) {}

  /** Whether this process can split panes: it runs inside tmux. */
  static available(env: Record<string, string | undefined>): boolean {
    return (env.TMUX ?? "") !== "";
  }

  /** A teammate seen for the first time gets its pane; the events after that change nothing. */
  readonly observe = (event: TeamEvent): void => {
    if (event.type !== "teammate" || this.#closed || this.#panes.has(event.name)) return;
    if (event.state === "failed" || event.state === "shutdown") return;
    const after = this.#last;
    const pane = this.#run(async () => {
      const beside = after ? await after : undefined;
      return this.#split(event.name, beside);
    });
    this.#panes.set(event.name, pane);
    this.#last = pane;
  };

  /** Kills every pane opened, by the id recorded when it was split. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#queue;
    for (const pane of this.#panes.values()) {
      const id = await pane;
      if (id !== undefined) await tmux(["kill-pane", "-t", id], this.context.env);
    }
    this.#panes.clear();
  }

  #run<T>(work: () => Promise<T>): Promise<T> {
    const result = this.#queue.then(work);
    this.#queue = result.catch(() => {});
    return result;
  }

  async #split(name: string, beside: string | undefined): Promise<string | undefined> {
    const { context } = this;
    const target = beside ?? context.env.TMUX_PANE;
    const args = [
      "split-window",
      "-d",
      "-P",
      "-F",
      "#{pane_id}",
      beside ? "-v" : "-h",
      ...(target ? ["-t", target] : []),
      "-c",
      context.workspace,
      // The store's URL may carry a password: given in the pane's environment, not on its command line.
      ...(context.store.kind === "postgres" ? ["-e", `AGENT_STORE=${context.store.url}`] : []),
      shellLine(followerCommand(name, context)),
    ];
    const result = await tmux(args, context.env);
    if (result.code !== 0) {
      context.warn(`could not open a tmux pane for ${name}: ${result.stderr.trim() || `tmux exited ${result.code}`}`);
      return undefined;
    }
    return result.stdout.trim() || undefined;
  }
}

function followerCommand(name: string, context: TeammatePanesContext): string[] {
  return [
    ...selfCommand(),
    "sessions",
    "show",
    context.sessionId,
    "--follow",
    "--agent",
    name,
    "--state-dir",
    context.stateRoot,
    "--workspace",
    context.workspace,
  ];
}

/** `exec` and every word single-quoted: tmux hands the line to the user's shell. */
function shellLine(argv: string[]): string {
  return `exec ${argv.map((word) => `'${word.replaceAll("'", `'\\''`)}'`).join(" ")}`;
}

async function tmux(args: string[], env: Record<string, string | undefined>): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const defined = Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined));
    const child = Bun.spawn(["tmux", ...args], { env: defined, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
    return { code, stdout, stderr };
  } catch (error) {
    return { code: 127, stdout: "", stderr: (error as Error).message };
  }
}
