import type { MailboxMessage } from "../../core/message.ts";
import type { MailboxStore } from "../../mailbox/store.ts";
import { derivedId } from "../../team/derived-id.ts";
import type { TeamRegistry } from "../../team/team-registry.ts";
import { TeammateUnavailableError } from "../../team/teammate-errors.ts";

const POLL_MS = 100;
/** The team is read less often than the mailbox: it only says whether to give up. */
const TEAM_EVERY = 10;

/**
 * Waits for a teammate's answer to the operator's message `sent`. The teammate
 * sends it to `user` under the id derived from the message's (team-mail.ts), so
 * it is found by id, whichever runtime or worker ran the turn. Gives up with an
 * error when the teammate fails or shuts down first (persisted as
 * shutdown only when it approved a shutdown request): no answer will come.
 * With `stillRun`, asked each second: undefined once it says nothing runs the
 * teammate any more.
 */
export async function waitForReply(sent: MailboxMessage, store: MailboxStore, team: TeamRegistry, stillRun?: () => Promise<boolean>): Promise<MailboxMessage | undefined> {
  const replyId = derivedId(sent.id, "result");
  for (let round = 0; ; round += 1) {
    const found = await store.find(replyId);
    if (found?.message) return found.message;
    if (round % TEAM_EVERY === 0) {
      // Nothing runs the teammate any more (its runtime ended): the caller decides what next.
      if (round > 0 && stillRun && !(await stillRun())) return undefined;
      const teammate = (await team.read()).find((t) => t.name === sent.recipient);
      if (!teammate || teammate.state === "failed" || teammate.state === "shutdown") {
        const why = teammate ? `is ${teammate.state}${teammate.failure ? ` (${teammate.failure})` : ""}` : "was removed";
        throw new TeammateUnavailableError(`teammate ${sent.recipient} ${why} before answering message ${sent.id}; see \`agent team list\``);
      }
    }
    await Bun.sleep(POLL_MS);
  }
}
