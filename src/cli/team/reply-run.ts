import { AgentError } from "../../core/errors.ts";
import type { MailboxMessage } from "../../core/message.ts";
import { runtimeHeldWithoutTaking } from "../../storage/runtime-lock.ts";
import { derivedId } from "../../team/derived-id.ts";
import type { AdminSession } from "../context.ts";
import { EXIT_CODES } from "../exit-codes.ts";
import { writeErr } from "../output.ts";
import type { AdminStores } from "../store/session-stores.ts";
import { selfCommand } from "../self-command.ts";
import { waitForReply } from "./reply-wait.ts";

/** How long `team send --wait` waits before it says on stderr what it waits for. */
export const SLOW_WAIT_MS = 2_000;

/** The runtime `team send --wait` ran for the message ended without the teammate's answer. */
export class NoReplyError extends AgentError {
  readonly code = "NO_REPLY";
  readonly category = "agent" as const;
}

/** Who runs a teammate now: a live runtime of its session (here, or a Lead elsewhere on PostgreSQL), a process holding its lease, or nobody. */
type Runner = { kind: "session" } | { kind: "holder"; holder: { kind: string; pid: number; host: string } } | undefined;

interface ReplyParts {
  session: AdminSession;
  stores: AdminStores;
  /** The command's own flags, which the runtime it may start is given too. */
  flags: { workspace?: string | undefined; "state-dir"?: string | undefined; store?: string | undefined };
}

/**
 * The teammate's answer to the operator's message `sent`. With a runtime that
 * runs the teammate (the session's, or an `agent worker` holding it), waits for
 * that one; with none, runs the session's runtime for the message as `agent
 * drain` would — the same command, so its recorded flags and its guards (the
 * session's lock, leases) are drain's own — then reads the answer. Never
 * silent: after SLOW_WAIT_MS one line on stderr says what it waits for.
 */
export async function answerTo(sent: MailboxMessage, parts: ReplyParts): Promise<MailboxMessage> {
  const { session, stores } = parts;
  const name = sent.recipient;
  const waiting = `agent: waiting for ${name}'s answer to message ${sent.id}`;
  // One notice, for whichever wait passes SLOW_WAIT_MS first.
  let told = false;
  const notice = (line: () => Promise<string>) => async (): Promise<string | undefined> => {
    if (told) return undefined;
    told = true;
    return line();
  };
  let drained = false;
  for (;;) {
    if ((await runnerOf(parts, name)) === undefined) {
      // Ran once and still no answer, with nothing else running it: waiting on would be for ever.
      if (drained) throw new NoReplyError(`the session's runtime ran and ${name} did not answer message ${sent.id}; see \`agent team list\``);
      drained = true;
      const code = await withNotice(notice(async () => `${waiting}: no runtime runs ${name}, so this runs session ${session.meta.id}'s runtime for it as \`agent drain\` would\n`), () => drain(parts));
      const found = (await stores.mailbox.find(derivedId(sent.id, "result")))?.message;
      if (found) return found;
      // Busy: a runtime started meanwhile and runs the session; it answers, and the wait below is for it.
      if (code !== 0 && code !== EXIT_CODES.busy) {
        throw new NoReplyError(`the session's runtime (agent drain) ended with exit ${code} before ${name} answered message ${sent.id}; the message waits in its mailbox for the next runtime`);
      }
    }
    const from = async () => `${waiting} from ${describe(await runnerOf(parts, name), session, name)}\n`;
    const stillRun = async () => (await runnerOf(parts, name)) !== undefined;
    const reply = await withNotice(notice(from), () => waitForReply(sent, stores.mailbox, stores.stores.team, stillRun));
    if (reply) return reply;
  }
}

async function runnerOf({ session, stores }: ReplyParts, name: string): Promise<Runner> {
  if (runtimeHeldWithoutTaking(session.dir) || (await stores.sharedOwner?.()) !== undefined) return { kind: "session" };
  const lease = (await stores.leases.live()).find((each) => each.name === name);
  return lease ? { kind: "holder", holder: lease.holder } : undefined;
}

function describe(runner: Runner, session: AdminSession, name: string): string {
  if (runner === undefined) return `a runtime, and none runs ${name} now: start \`agent drain --session ${session.meta.id}\` or an \`agent worker\``;
  if (runner.kind === "session") return `session ${session.meta.id}'s live runtime, which runs ${name}`;
  const { kind, pid, host } = runner.holder;
  return `the ${kind === "worker" ? "agent worker" : kind} that runs ${name} (pid ${pid} on ${host})`;
}

/** Runs `work`; if it takes longer than SLOW_WAIT_MS, the line `line` makes then (if any) goes to stderr. */
async function withNotice<T>(line: () => Promise<string | undefined>, work: () => Promise<T>): Promise<T> {
  const timer = setTimeout(() => void line().then((text) => (text === undefined ? undefined : writeErr(text)), () => {}), SLOW_WAIT_MS);
  try {
    return await work();
  } finally {
    clearTimeout(timer);
  }
}

/** `agent drain --session ID --quiet` with this command's flags: its answer on stdout is not this command's, its errors are shown. */
async function drain({ session, flags }: ReplyParts): Promise<number> {
  const own = [
    ...(flags.workspace !== undefined ? ["--workspace", flags.workspace] : []),
    ...(flags["state-dir"] !== undefined ? ["--state-dir", flags["state-dir"]] : []),
    ...(flags.store !== undefined ? ["--store", flags.store] : []),
  ];
  const child = Bun.spawn([...selfCommand(), "drain", "--session", session.meta.id, "--quiet", ...own], { stdin: "ignore", stdout: "ignore", stderr: "inherit" });
  return child.exited;
}
